#!/usr/bin/env python3
"""A probabilistic acceptor as a bound for fsmine eval: the same folds, perturbations and scores.

Each training fold gives a language model of the next label: Witten-Bell
smoothing of the counts after the previous visit (label and event), backed
off to the counts after its label, then to the labels' frequencies (add 0.5);
with --context 2, the two previous visits first. A session's surprise is
read from its moves' surprisals -ln p (the end included): --score max, the
largest; --score over, the sum of what each exceeds 2 nats. A session is
accepted when its surprise is at most a threshold T.

T is chosen on the held-out folds themselves, the least that accepts the
wanted share of their real sessions: an oracle no miner has, so each line
is an upper bound on what this acceptor gives at that share. The
perturbations (one middle step removed, two adjacent steps of different
labels swapped, events in place, none equal to a real session) and the
folds (FNV-1a of the session id) are eval's, read as alergia.py reads them
(chat turns agent_msg and user_msg dropped).

    python3 testdata/bench/surprisal.py LOG.jsonl [--context 1|2] [--score max|over]
"""

import argparse
import math
import os
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from alergia import END, fnv1a64, perturbations, read_sessions  # noqa: E402

START = ("__start__", "")


def contexts(vs, order):
    """(context, next label) per move: the last order visits, then the end."""
    out, hist = [], [START] * order
    for label, event in vs:
        out.append((tuple(hist), label))
        hist = hist[1:] + [(label, event)]
    out.append((tuple(hist), END))
    return out


def train(seqs, order):
    """The smoothed model of seqs: a function (context, label) -> p."""
    by_ctx = [defaultdict(Counter) for _ in range(order)]  # by the last k+1 visits
    by_label = defaultdict(Counter)
    unigram = Counter()
    for vs in seqs:
        for ctx, x in contexts(vs, order):
            for k in range(order):
                by_ctx[k][ctx[order - 1 - k:]][x] += 1
            by_label[ctx[-1][0]][x] += 1
            unigram[x] += 1
    total, kinds = sum(unigram.values()), len(unigram) + 1

    def wb(c, lower, x):
        n = sum(c.values())
        return (c[x] + len(c) * lower) / (n + len(c)) if n else lower

    def p(ctx, x):
        q = (unigram[x] + 0.5) / (total + 0.5 * kinds)
        q = wb(by_label[ctx[-1][0]], q, x)
        for k in range(order):
            q = wb(by_ctx[k][ctx[order - 1 - k:]], q, x)
        return q

    return p


def surprise(p, vs, order, score):
    s = [-math.log(p(ctx, x)) for ctx, x in contexts(vs, order)]
    return max(s) if score == "max" else sum(max(0.0, z - 2) for z in s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--context", type=int, default=1, choices=[1, 2])
    ap.add_argument("--score", default="over", choices=["max", "over"])
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    sessions = read_sessions(args.log)
    real = set(sessions.values())
    fold_of = {sid: fnv1a64(sid) % args.folds for sid in sessions}
    held, perturbed = [], []
    for f in range(args.folds):
        p = train([vs for sid, vs in sorted(sessions.items()) if fold_of[sid] != f], args.context)
        for sid, vs in sorted(sessions.items()):
            if fold_of[sid] != f:
                continue
            held.append(surprise(p, vs, args.context, args.score))
            perturbed += [surprise(p, q, args.context, args.score) for _, q in perturbations(vs) if q not in real]
    held.sort()
    print(f"{len(held)} sessions, {args.folds} folds, {len(perturbed)} perturbations; "
          f"context {args.context}, score {args.score}")
    print(f"  {'wanted':>6} {'T':>6} {'accepted':>8} {'rejected':>8}")
    for want in (0.80, 0.85, 0.90, 0.925, 0.95):
        t = held[min(len(held), math.ceil(want * len(held))) - 1]
        acc = sum(h <= t for h in held) / len(held)
        rej = sum(q > t for q in perturbed) / len(perturbed)
        print(f"  {want:6.3f} {t:6.2f} {acc:8.3f} {rej:8.3f}")


if __name__ == "__main__":
    main()
