package automaton

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"strconv"
)

// ComputeDigest returns the digest of the model's behaviour: "sha256:" and
// the hex SHA-256 of a canonical text, one line per item in file order, of
// everything that the run-time guard (guard.New) and the conformance checker
// (conform.New) read from a model and so enforce:
//
//   - Initial;
//   - each state: id, label, visits (the guard maps a label to its most
//     visited state), max_run (the repeat cap) and fields (the slots a
//     policy draft requires);
//   - each transition: from, event, to, count (orders the moves offered),
//     prob (reported with every decision), rare (rare_is_deviation), the
//     kind of generalisation ("generalized": "deny") and the back_edge mark
//     (a loop's cap counts a marked move inside the loop);
//   - each loop: its states, max_iterations (the default loop caps) and its
//     back edges (the transitions those caps count);
//   - each constraint over whole sessions: kind, labels, support and
//     confidence (the guard denies a step that breaks one);
//   - each argument rule: tool, argument, kind, support and value hashes;
//   - for a conditioned model (see By): the field, the sessions a value
//     needs, and each sub-map's value and the lines above of its map.
//
// What the guard does not read is provenance and is left out, so that the
// same data and options give the same digest: version, parent, created,
// generator, source, evidence, params, sessions counts, dwell times,
// examples, p95_iterations, the trunk and the variants. Params include how
// check and replay read logs for the model (params.format, fields and
// labels): the same map read from two formats, or exported and imported
// again, keeps its digest, and the digest does not vouch for them. A policy
// file is not part of the model and has no digest here.
func (m *Model) ComputeDigest() string { return m.digest(digestKind) }

// digestKind is the kind of digest ComputeDigest makes. Kind 3 added each
// transition's back_edge mark (a loop's cap counts a marked move inside the
// loop) to kind 2's lines.
const digestKind = 3

// digest returns the digest of the given kind, 2 or 3.
func (m *Model) digest(kind int) string {
	d := newDigester()
	d.line("fsmine.digest/" + strconv.Itoa(kind))
	m.digestBody(d, kind)
	argDigestLines(d, m.Args)
	m.digestBy(d, kind)
	return d.sum()
}

// digestBody hashes the lines of the model's own map, as the digest of the
// given kind has them.
func (m *Model) digestBody(d *digester, kind int) {
	d.line("initial", m.Initial)
	for _, s := range m.States {
		d.line(append([]string{"state", s.ID, s.Label, strconv.Itoa(s.Visits), strconv.Itoa(s.MaxRun), "fields"}, s.Fields...)...)
	}
	for _, t := range m.Transitions {
		fields := [...]string{"transition", t.From, t.Event, t.To, strconv.Itoa(t.Count),
			strconv.FormatFloat(t.Prob, 'g', -1, 64), strconv.FormatBool(t.Rare), t.Generalized, strconv.FormatBool(t.BackEdge)}
		n := len(fields)
		if kind < 3 {
			n-- // kind 2 had no back_edge mark
		}
		d.line(fields[:n]...)
	}
	for _, l := range m.Loops {
		d.line(append([]string{"loop", strconv.Itoa(l.MaxIterations)}, l.States...)...)
		for _, be := range l.BackEdges {
			d.line("back_edge", be.From, be.Event, be.To)
		}
	}
	for _, c := range m.Constraints {
		d.line(c.digestFields()...)
	}
}

// digester hashes lines of quoted, tab-separated fields: unambiguous
// whatever the fields hold.
type digester struct {
	h hash.Hash
	b []byte
}

func newDigester() *digester { return &digester{h: sha256.New()} }

func (d *digester) line(fields ...string) {
	d.b = d.b[:0]
	for i, f := range fields {
		if i > 0 {
			d.b = append(d.b, '\t')
		}
		d.b = strconv.AppendQuote(d.b, f)
	}
	d.b = append(d.b, '\n')
	d.h.Write(d.b)
}

func (d *digester) sum() string { return "sha256:" + hex.EncodeToString(d.h.Sum(nil)) }

// DigestError is returned by VerifyDigest (and so by Read and Load) for a
// model whose recorded digest is not the digest of its content: a model
// edited after it was mined (a loop cap raised by hand), or one written
// without a digest.
type DigestError struct {
	Path     string // the model file, when known (Load sets it)
	Stored   string // the digest the file records; empty for none
	Computed string // the digest of the file's content (ComputeDigest)
}

func (e *DigestError) Error() string {
	file := e.Path
	if file == "" {
		file = "MODEL.json"
	}
	if e.Stored == "" {
		return fmt.Sprintf("the model has no digest (its content's is %s): to use it as it is, seal it with fsmine seal %s", e.Computed, file)
	}
	return fmt.Sprintf("the model's digest is %s and its content's is %s: it was changed after it was mined; to keep an intended change, re-seal it with fsmine seal %s", e.Stored, e.Computed, file)
}

// VerifyDigest checks that the model's Digest is the digest of its content
// (ComputeDigest) and returns a *DigestError when it is not. A digest of the
// two kinds fsmine wrote before is accepted, for models mined before (see
// LegacyDigest): kind 2, without back_edge marks, and the first, without
// visits, probabilities and loops either. Such a model keeps working, but
// an edit of what its digest left out (a loop cap) goes unseen until it is
// re-sealed (fsmine seal), which gives it a digest of the current kind.
func (m *Model) VerifyDigest() error {
	m.legacy = false
	computed := m.ComputeDigest()
	switch m.Digest {
	case computed:
		return nil
	case "":
	case m.digest(2), m.legacyDigest():
		m.legacy = true
		return nil
	}
	return &DigestError{Stored: m.Digest, Computed: computed}
}

// LegacyDigest reports whether VerifyDigest accepted the model's digest as
// one of an older kind, which leaves out some of what is enforced.
func (m *Model) LegacyDigest() bool { return m.legacy }

// ErrVersionOverflow is returned by Seal for a model at the last version
// there is.
var ErrVersionOverflow = errors.New("the model is at the last version there is")

// Seal makes the model's digest its content's, recording the edit in its
// lineage: when the digest changes and there was one, the model becomes the
// next version of the model it was (Parent is the old version and digest).
// It reports whether the digest changed. The caller sets Created and
// Generator, which say when and by what the seal was made.
func (m *Model) Seal() (bool, error) {
	computed := m.ComputeDigest()
	if m.Digest == computed {
		m.legacy = false
		return false, nil
	}
	if m.Digest != "" {
		if m.Version == math.MaxInt {
			return false, ErrVersionOverflow
		}
		m.Parent = &Parent{Version: m.Version, Digest: m.Digest}
		m.Version++
	}
	m.Digest, m.legacy = computed, false
	return true, nil
}

// legacyDigest is the digest fsmine wrote before the digest covered
// everything the guard enforces: Initial, the states (id, label, and
// max_run and fields when set) and the transitions (from, event, to,
// count, rare, and the kind of generalisation when there is one), without
// visits, probabilities or loops. Kept to accept the models mined then.
func (m *Model) legacyDigest() string {
	h := sha256.New()
	var b []byte
	line := func(fields ...string) {
		b = b[:0]
		for i, f := range fields {
			if i > 0 {
				b = append(b, '\t')
			}
			b = strconv.AppendQuote(b, f)
		}
		b = append(b, '\n')
		h.Write(b)
	}
	line("initial", m.Initial)
	var st []string
	for _, s := range m.States {
		st = append(st[:0], "state", s.ID, s.Label)
		if s.MaxRun > 0 {
			st = append(st, strconv.Itoa(s.MaxRun))
		}
		if len(s.Fields) > 0 {
			// A run of "fields" and the paths: unambiguous, as the item
			// before is a label or max_run's digits.
			st = append(st, "fields")
			st = append(st, s.Fields...)
		}
		line(st...)
	}
	for _, t := range m.Transitions {
		if t.Generalized == "" {
			line("transition", t.From, t.Event, t.To, strconv.Itoa(t.Count), strconv.FormatBool(t.Rare))
		} else {
			line("transition", t.From, t.Event, t.To, strconv.Itoa(t.Count), strconv.FormatBool(t.Rare), t.Generalized)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
