package conform

import "github.com/fsmine/fsmine/automaton"

// Checkers makes the checkers of models with one Options as they are first
// asked for, and keeps them: the maps of a conditioned model
// (automaton.Model.For) share one, each checked by its own checker.
type Checkers struct {
	opt  Options
	made map[*automaton.Model]*Checker
}

// NewCheckers returns an empty Checkers that makes its checkers with opt.
func NewCheckers(opt Options) *Checkers {
	return &Checkers{opt: opt, made: map[*automaton.Model]*Checker{}}
}

// Put has cs answer c for m, a checker of m made with cs's options.
func (cs *Checkers) Put(m *automaton.Model, c *Checker) { cs.made[m] = c }

// For returns the checker of m, made on the first call.
func (cs *Checkers) For(m *automaton.Model) *Checker {
	c := cs.made[m]
	if c == nil {
		c = New(m, cs.opt)
		cs.made[m] = c
	}
	return c
}
