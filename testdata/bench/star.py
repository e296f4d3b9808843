#!/usr/bin/env python3
"""STAR's dialogues as fsmine records, every task with a single task per dialogue.

Usage: star.py STAR_CHECKOUT OUT_DIR

STAR_CHECKOUT is a clone of github.com/RasaHQ/STAR (commit
3058975092cdd09798e4a3a9e4ae135755824545, MIT licence, Rasa Technologies
2020). For each task it writes OUT_DIR/TASK.jsonl and OUT_DIR/TASK.flow.json
as ../shared/data/star holds them (its five tasks come out byte for byte):
a user turn is node user_utter (event user), the wizard's picked action its
label (event agent), the wizard's own text wizard_free_text, a query
query:API (event ok when the knowledge base returned an item, else empty).
go test ./cmd -run TestAllSTARTasks -v with FSMINE_STAR_DIR=OUT_DIR draws
every task's map and fits its flowchart (docs/diff-stats-report-render.md).
"""
import collections
import datetime
import json
import os
import sys


def main():
    repo, out = sys.argv[1], sys.argv[2]
    by_task = collections.defaultdict(list)
    ddir = os.path.join(repo, 'dialogues')
    for name in sorted(os.listdir(ddir)):
        with open(os.path.join(ddir, name)) as f:
            d = json.load(f)
        sc = d['Scenario']
        if sc.get('MultiTask') or len(sc['WizardCapabilities']) != 1:
            continue
        task = sc['WizardCapabilities'][0]['Task']
        sid = 'star:%d' % d['DialogueID']
        base = {'tasks': task, 'happy': sc.get('Happy'), 'multitask': sc.get('MultiTask'),
                'completion': d.get('CompletionLevel')}
        recs = []
        evs = d['Events']
        for i, e in enumerate(evs):
            a, agent = e['Action'], e['Agent']
            attrs = dict(base)
            if agent == 'User' and a == 'utter':
                node, ev = 'user_utter', 'user'
            elif agent == 'Wizard' and a == 'pick_suggestion':
                node, ev = e['ActionLabel'], 'agent'
            elif agent == 'Wizard' and a == 'utter':
                node, ev = 'wizard_free_text', 'agent'
            elif agent == 'Wizard' and a == 'query':
                ok, total = False, None
                for f in evs[i + 1:]:
                    if f['Agent'] == 'KnowledgeBase':
                        ok, total = f.get('Item') is not None, f.get('TotalItems')
                        break
                    if f['Action'] != 'query':
                        break
                node, ev = 'query:' + e['APIName'], 'ok' if ok else 'empty'
                attrs['api'], attrs['total_items'] = e['APIName'], total
            else:
                continue
            r = {'session_id': sid, 'step': len(recs), 'node': node, 'event': ev}
            if 'UnixTime' in e:
                t = datetime.datetime.fromtimestamp(int(e['UnixTime']), datetime.timezone.utc)
                r['ts'] = t.strftime('%Y-%m-%dT%H:%M:%SZ')
            r['attrs'] = attrs
            recs.append(r)
        by_task[task].append((d['DialogueID'], recs))
    os.makedirs(out, exist_ok=True)
    for task, ds in sorted(by_task.items()):
        with open(os.path.join(out, task + '.jsonl'), 'w') as f:
            for _, recs in sorted(ds):
                for r in recs:
                    f.write(json.dumps(r) + '\n')
        with open(os.path.join(repo, 'tasks', task, task + '.json')) as f:
            t = json.load(f)
        with open(os.path.join(out, task + '.flow.json'), 'w') as f:
            json.dump({'task': t['task'], 'graph': t['graph']}, f, indent=1)


if __name__ == '__main__':
    main()
