#!/usr/bin/env python3
"""Alergia as a peer of fsmine eval: the same folds, perturbations and scores.

Alergia (Carrasco & Oncina 1994, "Learning stochastic regular grammars by
means of a state merging method"): the training sessions' frequency prefix
tree is folded, red-blue, into an automaton. The least blue state (shortlex
order of its prefix) merges into the first red state it is compatible with,
else it turns red. Two states are compatible when they emit the same symbol
and, for every next symbol, the shares that take it differ by less than the
Hoeffding bound sqrt(ln(2/eps)/2) * (1/sqrt(n1) + 1/sqrt(n2)), recursively
over the successors they share.

--peer aalpy (the default) is AALpy's Alergia as the generalisation issue
ran it (automaton_type "mc", eps 0.05): a state per symbol node:event, no
end symbol (a Markov chain accepts a session when each of its steps has a
transition), the test on the prefix tree's own counts (AALpy keeps them
apart from the merged ones), leaves compatible with anything, no least
count. --peer all measures, one at a time, the differences between it, the
textbook algorithm (an end symbol, the test on the red state's merged
counts) and fsmine's `--merge alergia` (mine/learn.go: a state per node over
moves (event, next node), a least count of 10 arrivals below which states
count as compatible). --peer fsmine and --peer label run fsmine's alergia and
label merges through this harness, to check it against `fsmine eval`
(accepted is equal; rejected may be 0.001-0.002 lower, as the script does
not model check's loop caps).

Two more passive learners the generalisation issue names, over fsmine's
moves (event that left the previous visit, next node; then the end):
--peer ktails, k-tails (Biermann & Feldman 1972): the prefix tree's states
with the same continuations of up to k moves are one state, a
non-deterministic automaton that accepts a session when some path reads it;
--peer ktss, the k-testable language in the strict sense (Garcia & Vidal
1990): a session whose every k moves in a row (the start padded) some
training session made. --k K (repeatable) sets k (default 2); the size
column is states for ktails and k-grams for ktss. --peer bayes, state
merging by a posterior (Stolcke & Omohundro 1994, with a BIC-like prior):
red-blue over the prefix tree of moves, states of one label only, a blue
state merged into the red state that most raises the training moves'
log-likelihood less lam for each transition, lam = --lam L times
ln(moves)/2 (repeatable; default 4).

The protocol is fsmine eval's: 5 folds by the FNV-1a hash of the session
id, text turns (agent_msg, user_msg) dropped (a session of text turns only
is no session), acceptance = the held-out session is a path of the model; a
perturbation is one middle step removed or two adjacent steps of different
labels swapped (events stay in place), distinct per session, and those equal
to a session of the log are not counted.

Usage, from the repository (python3, no packages; well under a second):

    python3 testdata/bench/alergia.py ../shared/data/jsonl/taubench_airline.jsonl
    python3 testdata/bench/alergia.py --peer all --eps 0.05 --eps 0.2 LOG

Prints per setting: accepted, rejected (removal and swap), each kind apart,
and the states of the learned automaton (mean over the folds).
"""

import argparse
import json
import math
import re
import sys
from collections import defaultdict

DROP = re.compile(r"^(agent_msg|user_msg)$")
END = "__end__"
START = "__start__"


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def read_sessions(path):
    """Sessions as lists of (label, event) in step order, chat turns dropped."""
    rows = defaultdict(list)
    with open(path) as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            rows[r["session_id"]].append((r.get("step", 0), i, r["node"], r.get("event", "")))
    out = {}
    for sid, rs in rows.items():
        rs.sort()
        vs = tuple((n, e) for _, _, n, e in rs if not DROP.match(n))
        if vs:  # a session of chat turns only is no session (as fsmine reads it)
            out[sid] = vs
    return out


def perturbations(vs):
    """The distinct removal and swap perturbations of a session, by kind."""
    n = len(vs)
    seen, out = set(), []
    for i in range(1, n - 1):
        p = vs[:i] + vs[i + 1:]
        if p not in seen:
            seen.add(p)
            out.append(("remove", p))
    for i in range(n - 1):
        if vs[i][0] == vs[i + 1][0]:
            continue
        p = list(vs)
        p[i] = (vs[i + 1][0], vs[i][1])
        p[i + 1] = (vs[i][0], vs[i + 1][1])
        p = tuple(p)
        if p not in seen:
            seen.add(p)
            out.append(("swap", p))
    return out


# Symbol alphabets: a session of visits (label, event) as a symbol sequence,
# and the output (what two states must share to merge) of each symbol.

def moves(vs):
    """fsmine's moves: (event that left the previous visit, label), then the end."""
    out, ev = [], ""
    for label, event in vs:
        out.append((ev, label))
        ev = event
    out.append((ev, END))
    return out


def symbols(vs, end):
    out = [label + ":" + event for label, event in vs]
    if end:
        out.append(END)
    return out


class Node:
    __slots__ = ("out", "prefix", "count", "kids", "orig")

    def __init__(self, out, prefix):
        self.out, self.prefix, self.count, self.kids = out, prefix, 0, {}
        self.orig = None  # (count, {symbol: (count, node)}) before any merge


def alergia(seqs, output, eps, min_count, original, order_key):
    """Red-blue Alergia over symbol sequences; returns the root and the red states.

    seqs: list of symbol lists (one per training session); output(symbol) is
    the output of the state a symbol leads to. min_count: states with fewer
    arrivals count as compatible. original: test on the prefix tree's counts
    (AALpy) rather than on the red state's merged ones (Carrasco & Oncina).
    order_key(symbol): the order of symbols; blue states are taken in
    shortlex order of their prefixes in the tree.
    """
    root = Node(START, ())
    for seq in seqs:
        cur = root
        cur.count += 1
        for s in seq:
            nxt = cur.kids.get(s)
            if nxt is None:
                nxt = [0, Node(output(s), cur.prefix + (order_key(s),))]
                cur.kids[s] = nxt
            nxt[0] += 1
            cur = nxt[1]
            cur.count += 1
    stack = [root]
    while stack:
        n = stack.pop()
        n.orig = (n.count, {s: (c, k) for s, (c, k) in n.kids.items()})
        stack.extend(k for _, k in n.kids.values())

    bound = math.sqrt(0.5 * math.log(2 / eps))

    def differ(n1, n2, f1, f2):
        if n1 < max(min_count, 1) or n2 < max(min_count, 1):
            return False
        return abs(f1 / n1 - f2 / n2) > bound * (1 / math.sqrt(n1) + 1 / math.sqrt(n2))

    def view(n, orig):
        if orig:
            return n.orig[0], n.orig[1]
        return n.count, n.kids

    def compat(r, b):
        if r.out != b.out:
            return False
        rn, rk = view(r, original)
        bn, bk = view(b, original)
        if not rk or not bk:
            return True
        if original:
            # AALpy: shares of the outgoing symbols, not of arrivals.
            rn, bn = sum(c for c, _ in rk.values()), sum(c for c, _ in bk.values())
        for s in set(rk) | set(bk):
            if differ(rn, bn, rk[s][0] if s in rk else 0, bk[s][0] if s in bk else 0):
                return False
        for s in set(rk) & set(bk):
            if not compat(rk[s][1], bk[s][1]):
                return False
        return True

    def fold(r, b):
        r.count += b.count
        for s, (c, k) in b.kids.items():
            if s in r.kids:
                r.kids[s][0] += c
                fold(r.kids[s][1], k)
            else:
                r.kids[s] = [c, k]

    red = [root]
    redset = {id(root)}
    while True:
        blue = []
        for r in red:
            for s, (c, k) in r.kids.items():
                if id(k) not in redset:
                    blue.append((k.prefix, r, s, k))
        if not blue:
            break
        blue.sort(key=lambda x: (len(x[0]), x[0]))
        _, par, s, b = blue[0]
        for r in red:
            if compat(r, b):
                par.kids[s][1] = r
                fold(r, b)
                break
        else:
            red.append(b)
            redset.add(id(b))
    return root, red


def accepts(root, seq):
    cur = root
    for s in seq:
        nxt = cur.kids.get(s)
        if nxt is None:
            return False
        cur = nxt[1]
    return True


def label_merge(seqs):
    """fsmine --merge label: one state per label."""
    trans = set()
    for seq in seqs:
        prev = START
        for ev, label in seq:
            trans.add((prev, ev, label))
            prev = label
    labels = {t[2] for t in trans} | {START}
    return trans, len(labels)


def label_accepts(trans, seq):
    prev = START
    for ev, label in seq:
        if (prev, ev, label) not in trans:
            return False
        prev = label
    return True


def ktails(seqs, k):
    """k-tails over symbol sequences: (start class, {(class, symbol): classes}, classes)."""
    kids = [{}]
    for seq in seqs:
        cur = 0
        for s in seq:
            nxt = kids[cur].get(s)
            if nxt is None:
                nxt = len(kids)
                kids.append({})
                kids[cur][s] = nxt
            cur = nxt
    memo = {}

    def tails(n, d):
        if (n, d) not in memo:
            if d == 0 or not kids[n]:
                memo[n, d] = frozenset([()])
            else:
                memo[n, d] = frozenset((s,) + t for s, c in kids[n].items() for t in tails(c, d - 1))
        return memo[n, d]

    cls, of = {}, []
    for n in range(len(kids)):
        of.append(cls.setdefault(tails(n, k), len(cls)))
    trans = defaultdict(set)
    for n, ks in enumerate(kids):
        for s, c in ks.items():
            trans[of[n], s].add(of[c])
    return of[0], trans, len(cls)


def nfa_accepts(start, trans, seq):
    cur = {start}
    for s in seq:
        cur = set().union(*(trans.get((q, s), ()) for q in cur))
        if not cur:
            return False
    return True


def grams(seq, k):
    p = (START,) * (k - 1) + tuple(seq)
    return {p[i:i + k] for i in range(len(p) - k + 1)}


def log_lik(counts):
    n = sum(counts.values())
    return sum(c * math.log(c / n) for c in counts.values() if c)


def bayes(seqs, lam):
    """Posterior state merging: (children per state, red states)."""
    kids, cnt, lab = [{}], [defaultdict(int)], [START]
    for seq in seqs:
        cur = 0
        for s in seq:
            cnt[cur][s] += 1
            nxt = kids[cur].get(s)
            if nxt is None:
                nxt = len(kids)
                kids.append({})
                cnt.append(defaultdict(int))
                lab.append(s[1])
                kids[cur][s] = nxt
            cur = nxt

    def pairs(r, b):
        """The states b's subtree folds into: (red-side state, its added counts), b's states."""
        added, merged, attached = defaultdict(lambda: defaultdict(int)), [], {}
        stack = [(r, b)]
        while stack:
            r1, b1 = stack.pop()
            merged.append(b1)
            for s, c in cnt[b1].items():
                added[r1][s] += c
            for s, bk in kids[b1].items():
                rk = kids[r1].get(s, attached.get((r1, s)))
                if rk is None:
                    attached[r1, s] = bk
                else:
                    stack.append((rk, bk))
        return added, merged

    def gain(r, b):
        added, merged = pairs(r, b)
        d, trans = 0.0, 0
        for r1, add in added.items():
            new = defaultdict(int, cnt[r1])
            for s, c in add.items():
                new[s] += c
            d += log_lik(new) - log_lik(cnt[r1])
            trans += len(new) - len(cnt[r1])
        for b1 in merged:
            d -= log_lik(cnt[b1])
            trans -= len(cnt[b1])
        return d - lam * trans

    def fold(r, b):
        stack = [(r, b)]
        while stack:
            r1, b1 = stack.pop()
            for s, c in cnt[b1].items():
                cnt[r1][s] += c
            for s, bk in kids[b1].items():
                if s in kids[r1]:
                    stack.append((kids[r1][s], bk))
                else:
                    kids[r1][s] = bk

    red, redset = [0], {0}
    while True:
        blue = [(k, r, s) for r in red for s, k in kids[r].items() if k not in redset]
        if not blue:
            return kids, red
        b, par, s = min(blue)
        best, best_gain = None, 0.0
        for r in red:
            if lab[r] == lab[b] and (g := gain(r, b)) > best_gain:
                best, best_gain = r, g
        if best is None:
            red.append(b)
            redset.add(b)
        else:
            kids[par][s] = best
            fold(best, b)


def dfa_accepts(kids, seq):
    cur = 0
    for s in seq:
        cur = kids[cur].get(s)
        if cur is None:
            return False
    return True


def setting(name, alphabet, end, eps, min_count, original):
    return {"name": name, "alphabet": alphabet, "end": end, "eps": eps,
            "min_count": min_count, "original": original}


def settings(peer, eps, k=None, lam=None):
    if peer in ("ktails", "ktss"):
        return [{"name": f"{peer} k={k or 2}", "alphabet": peer, "k": k or 2}]
    if peer == "bayes":
        return [{"name": f"bayes lam={lam or 4:g} x ln(moves)/2", "alphabet": peer, "lam": lam or 4}]
    if peer == "label":
        return [{"name": "fsmine label merge", "alphabet": "label"}]
    if peer == "fsmine":
        return [setting("fsmine alergia", "move", True, eps or 0.01, 10, False)]
    if peer == "aalpy":
        return [setting("aalpy", "symbol", False, eps or 0.05, 0, True)]
    e = eps or 0.05
    # From the peer towards fsmine's alergia, one difference at a time.
    return [
        setting("aalpy (node:event states, no end, tree counts)", "symbol", False, e, 0, True),
        setting("aalpy with an end symbol", "symbol", True, e, 0, True),
        setting("aalpy with merged counts (Carrasco & Oncina)", "symbol", False, e, 0, False),
        setting("aalpy with a least count of 10", "symbol", False, e, 10, True),
        setting("aalpy on fsmine's tree (node states, moves)", "move", True, e, 0, True),
        setting("textbook (node:event states, end, merged)", "symbol", True, e, 0, False),
        setting("textbook with a least count of 10", "symbol", True, e, 10, False),
        setting("fsmine alergia with a least count of 0", "move", True, e, 0, False),
        setting("fsmine alergia (moves, end, merged, least 10)", "move", True, e, 10, False),
    ]


def encode(st, vs):
    if st["alphabet"] in ("move", "label", "ktails", "ktss", "bayes"):
        return moves(vs)
    return symbols(vs, st["end"])


def run(sessions, st, folds):
    real = set(sessions.values())
    fold_of = {sid: fnv1a64(sid) % folds for sid in sessions}
    acc = tests = 0
    rej = defaultdict(int)
    pert = defaultdict(int)
    states = 0
    for f in range(folds):
        train = [encode(st, vs) for sid, vs in sorted(sessions.items()) if fold_of[sid] != f]
        if st["alphabet"] == "label":
            trans, n = label_merge(train)
            ok = lambda seq: label_accepts(trans, seq)  # noqa: E731
        elif st["alphabet"] == "ktails":
            start, trans, n = ktails(train, st["k"])
            ok = lambda seq: nfa_accepts(start, trans, seq)  # noqa: E731
        elif st["alphabet"] == "bayes":
            kids, red = bayes(train, st["lam"] * math.log(sum(map(len, train))) / 2)
            n = len(red)
            ok = lambda seq: dfa_accepts(kids, seq)  # noqa: E731
        elif st["alphabet"] == "ktss":
            seen = set().union(*(grams(seq, st["k"]) for seq in train))
            n = len(seen)
            ok = lambda seq: grams(seq, st["k"]) <= seen  # noqa: E731
        else:
            if st["alphabet"] == "move":
                output = lambda m: m[1]  # noqa: E731
                key = lambda m: (m[1], m[0])  # noqa: E731
            else:
                output = lambda s: s  # noqa: E731
                key = lambda s: s  # noqa: E731
            root, red = alergia(train, output, st["eps"], st["min_count"], st["original"], key)
            n = len(red)
            ok = lambda seq: accepts(root, seq)  # noqa: E731
        states += n
        for sid, vs in sorted(sessions.items()):
            if fold_of[sid] != f:
                continue
            tests += 1
            acc += ok(encode(st, vs))
            for kind, p in perturbations(vs):
                if p in real:
                    continue
                pert[kind] += 1
                rej[kind] += not ok(encode(st, p))
    share = lambda k, n: k / n if n else 0.0  # noqa: E731
    return {
        "accepted": share(acc, tests),
        "rejected": share(rej["remove"] + rej["swap"], pert["remove"] + pert["swap"]),
        "remove": share(rej["remove"], pert["remove"]),
        "swap": share(rej["swap"], pert["swap"]),
        "states": states / folds,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--peer", default="aalpy", choices=["aalpy", "all", "fsmine", "label", "ktails", "ktss", "bayes"])
    ap.add_argument("--eps", type=float, action="append", help="significance level(s); the setting's own by default")
    ap.add_argument("--k", type=int, action="append", help="k of ktails and ktss (default 2)")
    ap.add_argument("--lam", type=float, action="append", help="bayes: the prior per transition, in ln(moves)/2 (default 4)")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    sys.setrecursionlimit(100000)
    sessions = read_sessions(args.log)
    print(f"{len(sessions)} sessions, {args.folds} folds")
    print(f"  {'setting':50} {'eps':>6} {'accepted':>8} {'rejected':>8} {'remove':>7} {'swap':>7} {'states':>7}")
    for eps, k, lam in [(e, k, m) for e in args.eps or [None] for k in args.k or [None] for m in args.lam or [None]]:
        for st in settings(args.peer, eps, k, lam):
            r = run(sessions, st, args.folds)
            e = f"{st['eps']:g}" if "eps" in st else "-"
            print(f"  {st['name']:50} {e:>6} {r['accepted']:8.3f} {r['rejected']:8.3f} "
                  f"{r['remove']:7.3f} {r['swap']:7.3f} {r['states']:7.1f}")


if __name__ == "__main__":
    main()
