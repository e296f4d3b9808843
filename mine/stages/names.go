package stages

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is one word of a node name: its lower-case text and where it
// stands in the name, as byte offsets.
type token struct {
	text       string
	start, end int
}

// tokenize splits a node name into words: at every character that is not a
// letter or digit (get_order_details, W_Completeren aanvraag,
// execute_tool:get_order), and where case changes inside a word
// (ChatOpenAI: chat, open, ai).
func tokenize(name string) []token {
	var out []token
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, token{text: strings.ToLower(name[start:end]), start: start, end: end})
		}
		start = -1
	}
	for i, r := range name {
		if !isWordRune(r) {
			flush(i)
			prev = r
			continue
		}
		if start >= 0 {
			next, _ := utf8.DecodeRuneInString(name[i+utf8.RuneLen(r):])
			lowerToUpper := unicode.IsLower(prev) && unicode.IsUpper(r)
			// "OpenAIModel": a capital that starts a lower-case word ends the
			// run of capitals before it.
			acronymEnd := unicode.IsUpper(prev) && unicode.IsUpper(r) && unicode.IsLower(next)
			if lowerToUpper || acronymEnd {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	flush(len(name))
	return out
}

// affinity is how much of two node names is a shared family: the words
// they share at the start plus the words they share at the end, over the
// words of the longer name. find_user_id_by_email and
// find_user_id_by_name_zip share 4 of 6 words (0.67); get_order_details and
// get_user_details 2 of 3 (0.67); cancel_pending_order and
// modify_pending_order_items none at either end (0).
func affinity(a, b []token) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 0
	}
	p, s := sharedEnds(a, b)
	return float64(p+s) / float64(n)
}

// negations are the words that name a failure (ride_inform_nothing_found,
// plane_reservation_failed, trivia_inform_answer_incorrect_ask_next): such
// a step is one side of a decision, and no merge that only a stage count
// forces joins it to another step (see candidate.blocked).
var negations = map[string]bool{
	"not": true, "nothing": true, "none": true, "never": true, "fail": true, "failed": true,
	"failure": true, "error": true, "unavailable": true, "invalid": true, "denied": true, "rejected": true,
	"incorrect": true, "wrong": true,
}

// negated says whether a name's words name a failure.
func negated(ts []token) bool {
	return slices.ContainsFunc(ts, func(t token) bool { return negations[t.text] })
}

// sharedEnds returns how many words a and b share at the start and,
// beyond those, at the end.
func sharedEnds(a, b []token) (prefix, suffix int) {
	m := min(len(a), len(b))
	for prefix < m && a[prefix].text == b[prefix].text {
		prefix++
	}
	for suffix < m-prefix && a[len(a)-1-suffix].text == b[len(b)-1-suffix].text {
		suffix++
	}
	return prefix, suffix
}

// Classes of steps, from the verb that starts a node's name.
const (
	ClassRead   = "read"   // looks something up: get_, find_, list_, search_ ...
	ClassAct    = "act"    // changes something: cancel_, modify_, update_, book_ ...
	ClassHelper = "helper" // works on what the agent already has: think, calculate
	ClassMixed  = "mixed"  // a stage of steps of different classes
)

var verbClass = map[string]string{}

func init() {
	for cls, verbs := range map[string]string{
		ClassRead: "get find list search lookup look fetch read query retrieve check verify view show " +
			"describe count browse inspect load lookup",
		ClassAct: "cancel modify update book return exchange create delete remove add set send transfer " +
			"submit pay refund write post put insert assign resolve close approve decline reject accept " +
			"register activate deactivate change edit make place issue grant schedule apply confirm " +
			"escalate upload save reset purchase buy sell move rename archive enable disable toggle reboot " +
			"restart reseat revoke suspend resume refuel connect disconnect install uninstall",
		ClassHelper: "think calculate compute plan reason reflect summarize summarise",
	} {
		for _, v := range strings.Fields(verbs) {
			verbClass[v] = cls
		}
	}
}

// classOf is the class of a node from the first word of its name, or of
// the part after its last colon (execute_tool:get_order_details is a
// lookup), or "" when the name does not tell.
func classOf(name string, toks []token) string {
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		for j, t := range toks {
			if t.start > i {
				toks = toks[j:]
				break
			}
		}
	}
	if len(toks) == 0 {
		return ""
	}
	return verbClass[toks[0].text]
}

// chatWords mark a node as a message turn rather than a task step
// (agent_msg, user_msg, chat, generation, ChatOpenAI, llm_call).
var chatWords = map[string]bool{
	"msg": true, "message": true, "messages": true, "chat": true, "turn": true, "utterance": true,
	"generation": true, "completion": true, "llm": true, "reply": true, "response": true,
}

// isChatName says whether a node's name marks it as a message turn: a
// word of chatWords, and no verb of a tool (send_message is a step) nor a
// verb before the word that makes the message its object: STAR's
// apartment_ask_custom_message is the step that asks for one.
func isChatName(name string, toks []token) bool {
	if classOf(name, toks) != "" {
		return false
	}
	for i, t := range toks {
		if !chatWords[t.text] {
			continue
		}
		for _, v := range toks[:i] {
			if verbClass[v.text] != "" || askWords[v.text] {
				return false
			}
		}
		return true
	}
	return false
}

// askWords are the verbs of a dialogue step that asks for a thing, which a
// name's chat word may then be (apartment_ask_custom_message).
var askWords = map[string]bool{"ask": true}

// connectors are the words a family name does not end on
// (find_user_id_by_* is the family find_user_id).
var connectors = map[string]bool{
	"by": true, "of": true, "for": true, "to": true, "with": true, "and": true, "from": true,
	"in": true, "on": true, "at": true, "via": true, "the": true,
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
