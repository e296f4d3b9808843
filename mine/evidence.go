package mine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/fsmine/fsmine/automaton"
)

// ErrEvidenceMismatch is returned by ReadEvidence and ReadFieldEvidenceOf
// for evidence that is not the model's own: written for another model or
// another version, or changed since the model was built.
var ErrEvidenceMismatch = errors.New("the evidence is not the model's")

// WriteEvidence writes lg as the evidence of the model whose digest is
// model: a partial result (see PartialSchema) whose header names the
// digest. It returns the "sha256:" digest of the bytes written, for the
// model's Evidence.Sessions, which the caller then writes: evidence first,
// so that a write that fails or is cut short between the two leaves evidence
// that names a model that is not there, which ReadEvidence refuses, never a
// new model beside old evidence that would pass.
func (lg *Log) WriteEvidence(w io.Writer, model string) (string, error) {
	h := sha256.New()
	if err := lg.writePartial(io.MultiWriter(w, h), model); err != nil {
		return "", err
	}
	return sum(h), nil
}

// WriteFieldEvidence writes ev as the fields evidence of the model whose
// digest is model, as WriteEvidence does.
func WriteFieldEvidence(w io.Writer, ev *FieldEvidence, model string) (string, error) {
	h := sha256.New()
	e := *ev
	e.Model = model
	if err := e.Write(io.MultiWriter(w, h)); err != nil {
		return "", err
	}
	return sum(h), nil
}

// ReadEvidence reads the evidence of model m from r (see WriteEvidence)
// and checks that it is m's: it names m's digest, and its bytes have the
// digest m recorded (Evidence.Sessions), which catches evidence edited
// after the build. Evidence and a model written before either was recorded
// (no digest in the evidence, no Evidence in the model) are taken as they
// are. name is used in errors; a mismatch wraps ErrEvidenceMismatch and
// names both digests.
func ReadEvidence(r io.Reader, name string, m *automaton.Model) (*Log, error) {
	h := sha256.New()
	lg, of, err := readPartial(io.TeeReader(r, h), name)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(h, r); err != nil {
		return nil, err
	}
	var want string
	if m.Evidence != nil {
		want = m.Evidence.Sessions
	}
	if err := checkEvidence(name, of, sum(h), want, m); err != nil {
		return nil, err
	}
	return lg, nil
}

// ReadFieldEvidenceOf reads the fields evidence of model m from r and checks
// that it is m's, as ReadEvidence does (against Evidence.Fields).
func ReadFieldEvidenceOf(r io.Reader, name string, m *automaton.Model) (*FieldEvidence, error) {
	h := sha256.New()
	ev, err := ReadFieldEvidence(io.TeeReader(r, h), name)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(h, r); err != nil {
		return nil, err
	}
	var want string
	if m.Evidence != nil {
		want = m.Evidence.Fields
	}
	if err := checkEvidence(name, ev.Model, sum(h), want, m); err != nil {
		return nil, err
	}
	return ev, nil
}

// checkEvidence checks that the evidence file name, which names the model
// digest of and whose bytes have digest got, is the evidence of m, which
// recorded the digest want for it.
func checkEvidence(name, of, got, want string, m *automaton.Model) error {
	switch {
	case of == "" && m.Evidence == nil:
		return nil // both from before the digests were recorded
	case of != m.Digest:
		if of == "" {
			of = "no model (written before evidence named its model)"
		}
		return fmt.Errorf("%s is the evidence of model %s, and the model is %s: %w", name, of, m.Digest, ErrEvidenceMismatch)
	case want != got:
		if want == "" {
			want = "none"
		}
		return fmt.Errorf("%s has digest %s, and the model recorded %s for it: changed since the model was built: %w", name, got, want, ErrEvidenceMismatch)
	}
	return nil
}

func sum(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

// Errors of UpdateCompatible.
var (
	ErrOtherLabels = errors.New("the model was mined with other label rules")
	ErrOtherFields = errors.New("the model was mined with another field map")
)

// UpdateCompatible says whether logs read with opt may update model m
// (build --update): the sessions of its evidence were labelled and mapped
// as m records, so new ones must be read with the same label rules and
// field map, or the merged log would mix two readings.
func UpdateCompatible(m *automaton.Model, opt ReadOptions) error {
	var rules []byte
	if opt.Rules != nil {
		rules = opt.Rules.Raw()
	}
	if !SameLabelling(m.Params.Labels, rules) {
		return ErrOtherLabels
	}
	if fmt.Sprint(m.Params.Fields) != fmt.Sprint(opt.Fields) && len(m.Params.Fields)+len(opt.Fields) > 0 {
		return ErrOtherFields
	}
	return nil
}
