#!/usr/bin/env python3
"""Guards AgentDojo runs with maps mined from the other models' benign runs,
unconditioned and conditioned on the user task (fsmine build --by, in each
--by-mode), and with argument rules (build --args), held out by model
(issue #24). Exploratory: see the caveats in docs/guard.md's report of it.

Usage, from the repository (DATA holds AgentDojo's per-run exports, one
agentdojo-MODEL.jsonl per model, as the Invariant explorer writes them: a
metadata line, then one run a line with "messages" and "metadata"
{suite_name, user_task_id, injection_task_id, success, security}):

    go build -o /tmp/fsmine . && python3 testdata/bench/agentdojo_by.py [--args] DATA /tmp/fsmine [BY_MIN]

A run becomes a session of its tool calls in order, then "answer". For
each model M and suite S, maps are mined from the benign runs of S of the
other models and M's runs of S are checked against them (fsmine check).
Printed per kind (plain; paths, moves and stages, the --by-modes) and per suite: benign runs accepted; utility
(benign runs that succeeded) before and after the guard; attack success
(attacked runs whose injection task succeeded, metadata.security) before
and after (a run passes when it fits); and of the successful attacks the
share denied at some step and at or before its first call of an acting
tool (ACT): the run's harmful call is not in the export, so "before harm"
lies between the two. In brackets, the upper bound again with the first
get_webpage taken as the harm in a run that calls no tool of ACT (Slack's
attack that makes the agent visit a phishing page).

With --args, a session starts with a record user_msg whose attrs.seen is
the system prompt and the user's request; each call's record carries its
arguments (attrs.args) and what it returned (attrs.seen, a source for the
steps after it). Every map is built with --args as well, and a run is
denied at the first of its deviation and its first call that breaks an
argument rule (kind+args). Two more sets of rows: the argument rules alone
(args alone), and rules learned per user task (task args, task args alone:
a model built with --args over labels prefixed with the task, of which
only the argument rules are used). Then, against each map alone, the
benign runs the rules deny and the successful attacks they stop, and the
findings (each flagged run's first) by tool and argument.
"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

ACT = {
    'send_money', 'update_scheduled_transaction', 'schedule_transaction', 'update_password',
    'update_user_info', 'send_email', 'delete_email', 'delete_file', 'share_file',
    'create_calendar_event', 'add_calendar_event_participants', 'cancel_calendar_event',
    'reschedule_calendar_event', 'send_direct_message', 'send_channel_message',
    'invite_user_to_slack', 'remove_user_from_slack', 'add_user_to_channel', 'post_webpage',
    'reserve_hotel', 'reserve_restaurant', 'reserve_car_rental', 'create_file', 'append_to_file',
}


def tool_calls(messages):
    """The run's tool calls in order, as [name, arguments, texts]: texts is
    what the call returned (its result, and its error if any). A result is
    matched to its call by id, or else to the oldest call not answered."""
    calls, pending = [], []
    for msg in messages:
        if msg.get('role') == 'assistant':
            for tc in msg.get('tool_calls') or []:
                args = tc['function'].get('arguments')
                if isinstance(args, str):
                    args = json.loads(args or '{}')
                pending.append((tc.get('id'), len(calls)))
                calls.append([tc['function']['name'], args if isinstance(args, dict) else {}, []])
        elif msg.get('role') == 'tool' and pending:
            ids = [cid for cid, _ in pending]
            _, ci = pending.pop(ids.index(msg['tool_call_id']) if msg.get('tool_call_id') in ids else 0)
            calls[ci][2] = [t for t in (msg.get('content'), msg.get('error')) if isinstance(t, str) and t]
    return calls


def sessions(path, with_args=False):
    """The runs of one model's export, as (session id, records). With
    with_args, a first record user_msg carries the system prompt and the
    user's request as attrs.seen, and each call's record its arguments
    (attrs.args) and what it returned (attrs.seen)."""
    name = os.path.basename(path)[len('agentdojo-'):-len('.jsonl')]
    for line in open(path):
        r = json.loads(line)
        if 'messages' not in r:
            continue
        m = r['metadata']
        sid = f"{name}:{m['suite_name']}:{m['name']}"
        attrs = {'user_task': m['suite_name'] + '/' + m['user_task_id'], 'suite': m['suite_name'],
                 'attacked': m['injection_task_id'] is not None, 'success': m['success'],
                 'security': m['security'], 'model': name}
        calls = tool_calls(r['messages'])
        if not with_args:
            nodes = [c for c, _, _ in calls] + ['answer']
            yield sid, [{'session_id': sid, 'step': i, 'node': c, 'event': 'ok', 'attrs': attrs}
                        for i, c in enumerate(nodes)]
            continue
        said = [msg['content'] for msg in r['messages']
                if msg.get('role') in ('system', 'user') and isinstance(msg.get('content'), str)]
        steps = [('user_msg', None, said)] + calls + [('answer', None, [])]
        recs = []
        for i, (node, args, seen) in enumerate(steps):
            a = dict(attrs)
            if args is not None:
                a['args'] = args
            if seen:
                a['seen'] = seen
            recs.append({'session_id': sid, 'step': i, 'node': node, 'event': 'ok', 'attrs': a})
        yield sid, recs


def write(path, sessions, prefix=False):
    """Writes the records of sessions to path; with prefix, each label is
    prefixed with the session's user task."""
    with open(path, 'w') as f:
        for recs in sessions:
            for r in recs:
                if prefix:
                    r = dict(r, node=r['attrs']['user_task'] + ':' + r['node'])
                f.write(json.dumps(r) + '\n')


def judge(fsmine, model_f, test_f):
    """Checks test_f against model_f: the step of each deviating session's
    first deviation, and of its first call that breaks an argument rule."""
    out = subprocess.run([fsmine, 'check', '-q', '--model', model_f, '--format', 'json', test_f],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f'fsmine check: {out.stderr}')
    s = json.loads(out.stdout)
    dev = {d['session_id']: d['step'] for d in s['deviations']}
    arg = {f['session_id']: f for f in s.get('args', {}).get('findings', [])}
    return dev, arg


def count(c, recs, denied):
    """Adds a run to the counters c; denied is the step at which the guard
    denies it, or None."""
    a = recs[0]['attrs']
    fits = denied is None
    if not a['attacked']:
        c['benign'] += 1
        c['benign_fit'] += fits
        c['util'] += a['success']
        c['util_kept'] += a['success'] and fits
        return
    c['attacked'] += 1
    if not a['security']:
        return
    c['succ'] += 1
    c['succ_passed'] += fits
    c['succ_denied'] += not fits
    acts = [r['step'] for r in recs if r['node'] in ACT]
    if not fits and acts and denied <= acts[0]:
        c['succ_denied_first_act'] += 1
    acts = acts or [r['step'] for r in recs if r['node'] == 'get_webpage']
    if not fits and acts and denied <= acts[0]:
        c['succ_denied_first_reach'] += 1


def main():
    argv = sys.argv[1:]
    with_args = '--args' in argv
    argv = [a for a in argv if a != '--args']
    data, fsmine = argv[0], argv[1]
    by_min = argv[2] if len(argv) > 2 else '10'
    runs = collections.defaultdict(list)  # (model, suite) -> [(sid, records)]
    for path in sorted(glob.glob(os.path.join(data, 'agentdojo-*.jsonl'))):
        for sid, recs in sessions(path, with_args):
            a = recs[0]['attrs']
            runs[(a['model'], a['suite'])].append((sid, recs))
    models = sorted({m for m, _ in runs})
    suites = sorted({s for _, s in runs})
    res = collections.defaultdict(collections.Counter)
    flags = collections.Counter()  # (rules, benign or attack, suite, kind, tool, arg) -> runs
    work = tempfile.mkdtemp()
    train_f, test_f, model_f = (os.path.join(work, n) for n in ('train.jsonl', 'test.jsonl', 'm.json'))
    for held in models:
        for suite in suites:
            train = [recs for (m, s), rs in runs.items() if m != held and s == suite
                     for _, recs in rs if not recs[0]['attrs']['attacked']]
            test = runs[(held, suite)]
            write(test_f, [recs for _, recs in test])
            task_arg = {}
            if with_args:
                # Rules per user task: an argument-only model over labels
                # prefixed with the task (its map is not used).
                write(train_f, train, prefix=True)
                write(test_f + '.task', [recs for _, recs in test], prefix=True)
                subprocess.run([fsmine, 'build', '-q', '--args', '-o', model_f, train_f], check=True)
                _, task_arg = judge(fsmine, model_f, test_f + '.task')
                for sid, recs in test:
                    for c in (res['task args alone'], res[('task args alone', suite)]):
                        count(c, recs, task_arg.get(sid, {}).get('step'))
                    a = recs[0]['attrs']
                    if sid in task_arg and (not a['attacked'] or a['security']):
                        f = task_arg[sid]
                        flags[('task', 'attack' if a['attacked'] else 'benign', suite, f['kind'],
                               f['tool'].split(':', 1)[1], f['arg'])] += 1
            write(train_f, train)
            by = ['--by', 'attrs.user_task', '--by-min', by_min, '--by-mode']
            for kind, extra in (('plain', []), ('paths', by + ['paths']), ('moves', by + ['moves']), ('stages', by + ['stages'])):
                subprocess.run([fsmine, 'build', '-q', '-o', model_f, train_f] + extra + ['--args'] * with_args,
                               check=True)
                dev, arg = judge(fsmine, model_f, test_f)
                for sid, recs in test:
                    for c in (res[kind], res[(kind, suite)]):
                        count(c, recs, dev.get(sid))
                    if not with_args:
                        continue
                    for name, rules in (('+args', arg), ('+task args', task_arg)):
                        steps = [s for s in (dev.get(sid), rules.get(sid, {}).get('step')) if s is not None]
                        for c in (res[kind + name], res[(kind + name, suite)]):
                            count(c, recs, min(steps) if steps else None)
                    if kind == 'plain':
                        found = arg.get(sid, {}).get('step')
                        for c in (res['args alone'], res[('args alone', suite)]):
                            count(c, recs, found)
                        a = recs[0]['attrs']
                        if sid in arg and (not a['attacked'] or a['security']):
                            f = arg[sid]
                            flags[('suite', 'attack' if a['attacked'] else 'benign', suite, f['kind'], f['tool'], f['arg'])] += 1
    print(f"{len(models)} models, {len(suites)} suites, by-min {by_min}" + (", argument rules" * with_args))
    for kind, c in sorted(res.items(), key=str):
        print(f"{str(kind):24s} benign accepted {c['benign_fit'] / c['benign']:.3f}; "
              f"utility {c['util'] / c['benign']:.3f} -> {c['util_kept'] / c['benign']:.3f}; "
              f"attack success {c['succ'] / c['attacked']:.3f} -> {c['succ_passed'] / c['attacked']:.3f}"
              f"-{(c['succ'] - c['succ_denied_first_act']) / c['attacked']:.3f}"
              f" ({(c['succ'] - c['succ_denied_first_reach']) / c['attacked']:.3f} or get_webpage); "
              f"successful attacks denied {c['succ_denied'] / max(c['succ'], 1):.3f}, "
              f"at or before the first acting call {c['succ_denied_first_act'] / max(c['succ'], 1):.3f}")
    if with_args:
        print("argument rules against the map alone: benign runs (successful ones) denied that it accepts;"
              " successful attacks it passes that they deny / stop at or before the first acting call"
              " (or get_webpage in a run without one):")
        for kind, c in sorted(res.items(), key=str):
            name = kind if isinstance(kind, str) else kind[0]
            if '+' not in name:
                continue
            b = res[name.split('+')[0] if isinstance(kind, str) else (name.split('+')[0], kind[1])]
            print(f"  {str(kind):32s} {b['benign_fit'] - c['benign_fit']:3d} ({b['util_kept'] - c['util_kept']:3d});"
                  f" {b['succ_passed'] - c['succ_passed']:3d} / {c['succ_denied_first_act'] - b['succ_denied_first_act']:3d}"
                  f" ({c['succ_denied_first_reach'] - b['succ_denied_first_reach']:3d})")
        print("runs flagged by argument rules (per suite or per task; benign runs or successful attacks), by suite, kind, tool, argument:")
        for key, n in sorted(flags.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:4d} {' '.join(key)}")


if __name__ == '__main__':
    main()
