package serve

import "github.com/fsmine/fsmine/automaton"

// The step answers and the decision log are written by hand (see step.go),
// so their strings are escaped here, in the two ways their readers have
// always seen them:
//
//   - an answer's strings as json.Marshal writes them, like the service's
//     other answers: <, > and & escaped as \u003c, \u003e and \u0026;
//   - a log line's strings with HTML escaping off, like the records fsmine
//     writes elsewhere: <, > and & as they are.
//
// Both write backspace and form feed as \b and \f, escape quotes,
// backslashes, the other control characters, U+2028 and U+2029, and
// replace invalid UTF-8 with U+FFFD. TestAppendDecision and
// FuzzAppendString hold them to their models.

// appendAnswerString appends s as a JSON string as json.Marshal writes it.
func appendAnswerString(b []byte, s string) []byte { return automaton.AppendJSONString(b, s, true) }

// appendLogString appends s as a JSON string as json.Marshal writes it with
// HTML escaping off.
func appendLogString(b []byte, s string) []byte { return automaton.AppendJSONString(b, s, false) }
