package formats

// tau-bench trajectories (github.com/sierra-research/tau-bench, v1) and
// tau2-bench simulation results (github.com/sierra-research/tau2-bench).
// tau2 writes one JSON document: {"timestamp", "info": {...}, "tasks":
// [...], "simulations": [{"id", "task_id", "trial", "termination_reason",
// "reward_info": {"reward"}, "messages": [{"role", "content", "tool_calls":
// [{"id", "name", "arguments"}], "turn_idx", "timestamp"}, {"role": "tool",
// "id", "content", "error"}...]}]}. tau-bench v1 writes a JSON list of
// {"task_id", "reward", "info", "traj": [chat messages, with OpenAI-style
// "tool_calls": [{"id", "function": {"name", "arguments"}}] and "tool"
// messages with "tool_call_id"], "trial"}; its tools answer "Error: ..."
// when they fail (tau_bench/envs/base.py).
//
// tau2's experiment folders ("dir" format, the default of voice runs;
// src/tau2/data_model/simulation.py, Results.save and Results.load) hold
// results.json, the same document without "simulations" and with an
// optional "simulation_index": [{"id", "task_id", "trial", ...}], and one
// simulations/<id>.json per run, a SimulationRun object. Voice
// (full-duplex) runs record "ticks" instead of "messages": [{"tick_id",
// "timestamp", "agent_chunk", "user_chunk" (messages with
// "contains_speech"), "agent_tool_calls", "user_tool_calls",
// "agent_tool_results", "user_tool_results"}], one per 50 ms or so.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	json "github.com/goccy/go-json"
)

// FormatTau is tau-bench (v1) and tau2-bench trajectories.
const FormatTau = "tau"

func init() {
	Register(&Format{
		Name:     FormatTau,
		Detect:   detectTau,
		Priority: 10,
		Convert:  convertTau,
		Dir:      tauDir,
	})
}

func detectTau(head []byte) bool {
	s := sniffJSON(head)
	if s == nil || s.isRecord() {
		return false
	}
	if s.array {
		// tau-bench v1: a list of {task_id, reward, info, traj, trial}.
		return s.has("", "traj") || (s.has("", "task_id") && s.has("", "info") && s.has("", "reward"))
	}
	// tau2: the simulations, or the run info that precedes them; or one
	// simulation of an experiment folder, read alone.
	return s.has("", "simulations") || (s.has("info", "agent_info") && s.has("info", "user_info")) || tau2SimShape(s)
}

// tau2SimShape reports whether a head is a tau2 SimulationRun.
func tau2SimShape(s *jsonShape) bool {
	return s.has("", "id") && s.has("", "task_id") && s.has("", "termination_reason")
}

type tau2File struct {
	Info        tau2Info          `json:"info"`
	Simulations []json.RawMessage `json:"simulations"`
}

type tau2Info struct {
	AgentInfo struct {
		LLM string `json:"llm"`
	} `json:"agent_info"`
	EnvironmentInfo struct {
		DomainName string `json:"domain_name"`
	} `json:"environment_info"`

	seen bool // write attrs.seen (ImportOptions.Seen)
}

type tau2Sim struct {
	ID                string          `json:"id"`
	TaskID            json.RawMessage `json:"task_id"`
	Trial             json.RawMessage `json:"trial"`
	TerminationReason string          `json:"termination_reason"`
	RewardInfo        *struct {
		Reward json.RawMessage `json:"reward"`
	} `json:"reward_info"`
	Messages []tau2Msg  `json:"messages"`
	Ticks    []tau2Tick `json:"ticks"`
}

type tau2Msg struct {
	Role      string          `json:"role"`
	ID        string          `json:"id"`
	Content   json.RawMessage `json:"content"`
	Error     *bool           `json:"error"`
	ToolCalls []tau2ToolCall  `json:"tool_calls"`
	TurnIdx   json.RawMessage `json:"turn_idx"`
	Timestamp string          `json:"timestamp"`

	tick json.RawMessage // the tick a message of a voice run comes from
}

// tau2Chunk is what a tick of a voice run records of a side's speech.
type tau2Chunk struct {
	Content        tau2Text `json:"content"`
	ContainsSpeech *bool    `json:"contains_speech"`
	Timestamp      string   `json:"timestamp"`
}

type tau2ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type tau2Tick struct {
	TickID           json.RawMessage `json:"tick_id"`
	Timestamp        string          `json:"timestamp"`
	AgentChunk       *tau2Chunk      `json:"agent_chunk"`
	UserChunk        *tau2Chunk      `json:"user_chunk"`
	AgentToolCalls   []tau2ToolCall  `json:"agent_tool_calls"`
	UserToolCalls    []tau2ToolCall  `json:"user_tool_calls"`
	AgentToolResults []tau2Msg       `json:"agent_tool_results"`
	UserToolResults  []tau2Msg       `json:"user_tool_results"`
}

// speaks reports whether a chunk of a voice run carries speech: its
// contains_speech, or when that is absent, whether it has text.
func (m *tau2Chunk) speaks() bool {
	if m == nil {
		return false
	}
	if m.ContainsSpeech != nil {
		return *m.ContainsSpeech
	}
	return bool(m.Content)
}

// tau2Text is whether a message has text (a non-blank string), without
// keeping the text.
type tau2Text bool

func (t *tau2Text) UnmarshalJSON(b []byte) error {
	*t = tau2Text(jsonKind(b) == '"' && strings.TrimSpace(jsonText(b)) != "")
	return nil
}

// tau2TickMessages turns the ticks of a voice run into the messages of its
// turns. tau2's own Tick.get_all_messages makes a message of every tick
// (some twenty a second); here a turn starts where a side starts to speak
// after a tick of silence, so that a run reads as the conversation it is:
// per tick, the agent's new turn, its tool calls and their results, then
// the user's, in the order get_all_messages gives them.
func tau2TickMessages(ticks []tau2Tick) []tau2Msg {
	var msgs []tau2Msg
	agentSpoke, userSpoke := false, false
	for _, t := range ticks {
		side := func(role string, chunk *tau2Chunk, spoke *bool, calls []tau2ToolCall, results []tau2Msg) {
			ts := t.Timestamp
			if chunk != nil && chunk.Timestamp != "" {
				ts = chunk.Timestamp
			}
			speaks := chunk.speaks()
			if speaks && !*spoke {
				msgs = append(msgs, tau2Msg{Role: role, Timestamp: ts, tick: t.TickID})
			}
			*spoke = speaks
			if len(calls) > 0 {
				msgs = append(msgs, tau2Msg{Role: role, ToolCalls: calls, Timestamp: ts, tick: t.TickID})
			}
			for _, r := range results {
				r.Role = "tool"
				msgs = append(msgs, r)
			}
		}
		side("assistant", t.AgentChunk, &agentSpoke, t.AgentToolCalls, t.AgentToolResults)
		side("user", t.UserChunk, &userSpoke, t.UserToolCalls, t.UserToolResults)
	}
	return msgs
}

type tau1Run struct {
	TaskID json.RawMessage `json:"task_id"`
	Reward json.RawMessage `json:"reward"`
	Trial  json.RawMessage `json:"trial"`
	Traj   []struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCallID string  `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"traj"`
}

// convertTau writes one record per turn: a text turn is node agent_msg
// (event agent) or user_msg (event user); a message with tool calls becomes
// one record per call, the node the tool's name and the event error when
// the tool's answer says so, else ok (the message's text, if any, is the
// preamble of the call and makes no record). Tool answers and system
// prompts make no record. Steps count from 0 in each session.
func convertTau(r io.Reader, w io.Writer, opt ImportOptions) error {
	h := sha256.New()
	jr := newJSONReader(io.TeeReader(r, h))
	defer jr.release()
	rw := newRecordWriter(w)
	defer rw.release()
	t := &tauInput{jr: jr, rw: rw, ids: tau2IDs{}, seen: opt.Seen}
	var err error
	if jr.startsArray() {
		err = jr.items(t.item)
	} else {
		// Values one after another (one tau2 results document, or
		// simulations): a results document's simulations are read one at
		// a time (see tau2Results).
		s := newDocScanner(jr.pr)
		defer s.release()
		err = t.values(s)
	}
	if err != nil {
		return err
	}
	if len(t.v1) > 0 {
		// v1 runs are named by task and trial only: prefix the input's
		// digest (its first 8 hex digits, as in the model's source.files)
		// so that runs of different files stay different sessions.
		prefix := hex.EncodeToString(h.Sum(nil))[:8]
		runs := map[string][2]int{} // task and trial -> line and column of the run
		for i, raw := range t.v1 {
			if err := convertTau1(jr, raw, t.v1At[i], prefix, runs, rw, &t.obj, opt.Seen); err != nil {
				return err
			}
		}
	}
	return rw.flush()
}

// tauInput is what convertTau's read of an input keeps.
type tauInput struct {
	jr   *jsonReader
	rw   *recordWriter
	obj  jsonObject
	ids  tau2IDs
	seen bool // ImportOptions.Seen
	// v1 holds the tau-bench v1 runs read, and v1At where each starts:
	// their session ids need the digest of the whole input, so they wait.
	v1   []json.RawMessage
	v1At []int64
}

// item reads one value of the input read whole (at offset at): an element
// of a top-level array, or a top-level value that is no tau2 results
// document read as it comes.
func (t *tauInput) item(raw json.RawMessage, at int64) error {
	jr := t.jr
	if jsonKind(raw) != '{' {
		return jr.errorAt(at, "want a tau2 results object or a tau-bench list of runs")
	}
	var probe struct {
		Simulations       json.RawMessage `json:"simulations"`
		Traj              json.RawMessage `json:"traj"`
		TaskID            json.RawMessage `json:"task_id"`
		TerminationReason json.RawMessage `json:"termination_reason"`
		Info              json.RawMessage `json:"info"`
		Tasks             json.RawMessage `json:"tasks"`
	}
	if err := jr.unmarshal(raw, at, &probe); err != nil {
		return err
	}
	switch {
	case probe.Simulations != nil:
		return convertTau2(jr, raw, at, t.ids, t.rw, &t.obj, t.seen)
	case probe.Traj != nil:
		// raw may be the reader's buffer (see tau2Results.end).
		t.v1 = append(t.v1, bytes.Clone(raw))
		t.v1At = append(t.v1At, at)
		return nil
	case probe.TaskID != nil && probe.TerminationReason != nil:
		return convertTau2Sim(jr, raw, at, "", t.ids, &tau2Info{seen: t.seen}, t.rw, &t.obj)
	case probe.Info != nil && probe.Tasks != nil:
		return jr.errorAt(at, "tau2 results without \"simulations\": the results.json of an experiment folder (name the folder, which holds simulations/)")
	}
	return jr.errorAt(at, "neither tau2 results (no \"simulations\"), a tau2 simulation (no \"task_id\" and \"termination_reason\") nor a tau-bench run (no \"traj\")")
}

func convertTau2(jr *jsonReader, raw json.RawMessage, at int64, ids tau2IDs, rw *recordWriter, obj *jsonObject, seen bool) error {
	var f tau2File
	if err := jr.unmarshal(raw, at, &f); err != nil {
		return err
	}
	f.Info.seen = seen
	simAt := simulationPlaces(raw, at, f.Simulations)
	for i, simRaw := range f.Simulations {
		simAt := simAt(i)
		if err := convertTau2Sim(jr, simRaw, simAt, "", ids, &f.Info, rw, obj); err != nil {
			return err
		}
	}
	return nil
}

// simulationPlaces returns where the i-th of sims, the simulations decoded
// from the results object raw (at offset at), starts in the input: by the
// elements of its "simulations" member, else (a name written with escapes)
// where its text is found in raw after the one before.
func simulationPlaces(raw []byte, at int64, sims []json.RawMessage) func(i int) int64 {
	if offs := memberElements(raw, "simulations"); len(offs) == len(sims) {
		return func(i int) int64 { return at + int64(offs[i]) }
	}
	c := rawCursor{raw: raw}
	return func(i int) int64 { return at + int64(c.index(sims[i])) }
}

// tau2IDs holds where each simulation id of an input was read: the
// file within a folder input ("" the input), the line and the column.
type tau2IDs map[string]tau2Where

type tau2Where struct {
	file      string
	line, col int
}

// convertTau2Sim writes the records of one simulation; one that makes no
// record (no messages, or only tool and system ones) is skipped, with a
// note naming it. file names the file within a folder input, "" the input.
// A simulation whose id ids already holds is an error: the id is its
// session, and two runs in one session would be read as one, their turns
// interleaved by step.
func convertTau2Sim(jr *jsonReader, simRaw json.RawMessage, simAt int64, file string, ids tau2IDs, info *tau2Info, rw *recordWriter, obj *jsonObject) error {
	var sim tau2Sim
	if err := jr.unmarshal(simRaw, simAt, &sim); err != nil {
		return err
	}
	if sim.ID == "" {
		return jr.errorAt(simAt, "simulation without an id")
	}
	line, col := jr.pr.pos(simAt)
	if prev, dup := ids[sim.ID]; dup {
		first := fmt.Sprintf("line %d, column %d", prev.line, prev.col)
		if prev.file != file {
			first = prev.file + ": " + first
		}
		return jr.errorAt(simAt, "simulation %s: a second simulation with this id (the first: %s)", sim.ID, first)
	}
	ids[sim.ID] = tau2Where{file, line, col}
	// Where each message starts, so that its records and errors name its
	// line; a voice run's messages, made from its ticks, are placed at
	// the simulation.
	msgAt := messagePlaces(simRaw, simAt, "messages", len(sim.Messages))
	if len(sim.Messages) == 0 && len(sim.Ticks) > 0 {
		sim.Messages = tau2TickMessages(sim.Ticks)
	}
	answers := toolAnswers{}
	for i, m := range sim.Messages {
		if m.Role == "tool" {
			answers.add(m.ID, i, m.Error != nil && *m.Error)
		}
	}
	step := int64(0)
	var args json.RawMessage // of the tool call being written
	var seen string          // the text the step brings in (ImportOptions.Seen)
	for mi, m := range sim.Messages {
		at := msgAt(mi)
		mline, _ := jr.pr.pos(at)
		var ts int64
		hasTS := false
		if m.Timestamp != "" {
			var ok bool
			if ts, ok = parseTimeText(m.Timestamp); !ok {
				return jr.errorAt(at, "simulation %s, message %d: timestamp %q is not a time", sim.ID, mi, m.Timestamp)
			}
			hasTS = true
		}
		emit := func(node, event string) error {
			obj.reset()
			obj.str(FieldSession, sim.ID)
			obj.int(FieldStep, step)
			obj.str(FieldNode, node)
			obj.str(FieldEvent, event)
			if hasTS {
				obj.time(FieldTime, ts)
			}
			obj.open("attrs")
			obj.strNonEmpty("task_id", jsonText(sim.TaskID))
			obj.raw("trial", sim.Trial)
			obj.strNonEmpty("domain", info.EnvironmentInfo.DomainName)
			obj.strNonEmpty("model", info.AgentInfo.LLM)
			if sim.RewardInfo != nil {
				obj.raw("reward", sim.RewardInfo.Reward)
			}
			obj.strNonEmpty("termination", sim.TerminationReason)
			obj.str("actor", m.Role)
			obj.raw("turn_idx", m.TurnIdx)
			obj.raw("tick", m.tick)
			writeToolArgs(obj, args)
			writeSeen(obj, seen)
			args, seen = nil, ""
			step++
			if file != "" {
				// A folder's files are one input: no line of it names
				// the record.
				return rw.write(obj.bytes())
			}
			return rw.writeAt(mline, obj.bytes())
		}
		switch {
		case m.Role == "tool" || m.Role == "system":
		case len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				if c.Name == "" {
					return jr.errorAt(at, "simulation %s, message %d: a tool call without a name", sim.ID, mi)
				}
				args = c.Arguments
				if info.seen {
					if ai := answers.answer(c.ID, mi); ai >= 0 {
						seen = jsonText(sim.Messages[ai].Content)
					}
				}
				if err := emit(c.Name, answers.event(c.ID, mi)); err != nil {
					return err
				}
			}
		case m.Role == "assistant":
			if err := emit("agent_msg", "agent"); err != nil {
				return err
			}
		case m.Role == "user":
			if info.seen {
				seen = jsonText(m.Content)
			}
			if err := emit("user_msg", "user"); err != nil {
				return err
			}
		default:
			return jr.errorAt(at, "simulation %s, message %d: role %q, want user, assistant, tool or system", sim.ID, mi, m.Role)
		}
	}
	if step == 0 {
		// A run without turns still has a reward and a termination
		// (--outcome reads them): it is not left out unseen.
		reason := "simulation " + sim.ID + ": no messages"
		if len(sim.Messages) > 0 {
			reason = "simulation " + sim.ID + ": no user, assistant or tool-call message"
		}
		return writeNote(rw, true, line, file, reason)
	}
	return nil
}

// messagePlaces returns where the i-th of the n messages of a run (raw, at
// offset at; key names its array of messages) starts in the input: at
// the message, or at the run where the array read does not hold n.
func messagePlaces(raw []byte, at int64, key string, n int) func(i int) int64 {
	if offs := memberElements(raw, key); len(offs) == n && n > 0 {
		return func(i int) int64 { return at + int64(offs[i]) }
	}
	return func(int) int64 { return at }
}

// convertTau1 writes the records of one tau-bench v1 run. runs holds the
// line and column of each task and trial read so far: a second run of a
// task and trial is an error, for both would be one session.
func convertTau1(jr *jsonReader, raw json.RawMessage, at int64, prefix string, runs map[string][2]int, rw *recordWriter, obj *jsonObject, withSeen bool) error {
	var run tau1Run
	if err := jr.unmarshal(raw, at, &run); err != nil {
		return err
	}
	task, trial := jsonText(run.TaskID), jsonText(run.Trial)
	if task == "" {
		return jr.errorAt(at, "a run without a task_id")
	}
	if trial == "" {
		trial = "0"
	}
	session := prefix + ":" + task + ":t" + trial
	if prev, dup := runs[session]; dup {
		return jr.errorAt(at, "task %s trial %s: a second run of this task and trial (the first: line %d, column %d)", task, trial, prev[0], prev[1])
	}
	line, col := jr.pr.pos(at)
	runs[session] = [2]int{line, col}
	// Where each message starts, so that its records and errors name its
	// line.
	msgAt := messagePlaces(raw, at, "traj", len(run.Traj))
	mline := line
	answers := toolAnswers{}
	for i, m := range run.Traj {
		if m.Role == "tool" {
			answers.add(m.ToolCallID, i, m.Content != nil && strings.HasPrefix(*m.Content, "Error"))
		}
	}
	step := int64(0)
	var args json.RawMessage // of the tool call being written
	var seen string          // the text the step brings in (withSeen)
	emit := func(node, event, actor string) error {
		obj.reset()
		obj.str(FieldSession, session)
		obj.int(FieldStep, step)
		obj.str(FieldNode, node)
		obj.str(FieldEvent, event)
		obj.open("attrs")
		obj.str("task_id", task)
		obj.raw("trial", run.Trial)
		obj.raw("reward", run.Reward)
		obj.str("actor", actor)
		writeToolArgs(obj, args)
		writeSeen(obj, seen)
		args, seen = nil, ""
		step++
		return rw.writeAt(mline, obj.bytes())
	}
	for mi, m := range run.Traj {
		mat := msgAt(mi)
		mline, _ = jr.pr.pos(mat)
		switch {
		case m.Role == "tool" || m.Role == "system":
		case len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				if c.Function.Name == "" {
					return jr.errorAt(mat, "task %s trial %s, message %d: a tool call without a name", task, trial, mi)
				}
				args = c.Function.Arguments
				if ai := answers.answer(c.ID, mi); withSeen && ai >= 0 && run.Traj[ai].Content != nil {
					seen = *run.Traj[ai].Content
				}
				if err := emit(c.Function.Name, answers.event(c.ID, mi), m.Role); err != nil {
					return err
				}
			}
		case m.Role == "assistant":
			if err := emit("agent_msg", "agent", m.Role); err != nil {
				return err
			}
		case m.Role == "user":
			if withSeen && m.Content != nil {
				seen = *m.Content
			}
			if err := emit("user_msg", "user", m.Role); err != nil {
				return err
			}
		default:
			return jr.errorAt(mat, "task %s trial %s, message %d: role %q, want user, assistant, tool or system", task, trial, mi, m.Role)
		}
	}
	return nil
}

// maxToolArgs bounds the arguments of a tool call that a record carries, as
// compact JSON: larger ones are left out, and the record says how large they
// were (attrs.args_bytes), so that no hostile call makes every reader of
// the records hold megabytes a line.
const maxToolArgs = 16 << 10

// writeToolArgs writes a tool call's arguments into the record's attrs as
// args: the JSON value the tool was called with (an object of named
// arguments, nested objects and arrays as they are), compacted onto the
// line. OpenAI-style arguments, a string of JSON text (tau-bench v1), are
// decoded first when the text is a JSON object or array; any other string
// is kept as the string. Absent and null arguments write nothing.
func writeToolArgs(obj *jsonObject, raw json.RawMessage) {
	if jsonKind(raw) == '"' {
		// Valid and Compact both: a Valid alone has let text that is
		// not JSON through (go-json v0.10.5's took ",{}").
		text := []byte(jsonText(raw))
		var buf bytes.Buffer
		if k := jsonKind(text); (k != '{' && k != '[') || !json.Valid(text) || json.Compact(&buf, text) != nil {
			if len(text) > maxToolArgs {
				obj.int("args_bytes", int64(len(text)))
				return
			}
			obj.strNonEmpty("args", string(text))
			return
		}
		raw = buf.Bytes()
	}
	if kind := jsonKind(raw); kind == 0 || kind == 'n' {
		return
	}
	compact := appendCompact(nil, raw)
	if len(compact) > maxToolArgs {
		obj.int("args_bytes", int64(len(compact)))
		return
	}
	obj.key("args")
	obj.b = append(obj.b, compact...)
}

// toolAnswers finds the tool message that answers a call: the first one
// with the call's id after the call. Ids are not unique within a
// trajectory (tau-bench v1 reuses them), so matching by id alone would
// give a call the outcome of a later one.
type toolAnswers map[string][]toolAnswer

type toolAnswer struct {
	msg    int
	failed bool
}

func (a toolAnswers) add(id string, msg int, failed bool) {
	a[id] = append(a[id], toolAnswer{msg, failed})
}

// answer is the index of the message that answers the call with id in
// message msg, or -1.
func (a toolAnswers) answer(id string, msg int) int {
	for _, ans := range a[id] {
		if ans.msg > msg {
			return ans.msg
		}
	}
	return -1
}

// writeSeen writes text a step brings into the session (the user's words,
// a tool's answer) into the record's attrs as seen, for the argument rules
// (see LearnArgs), cut to MaxSeenText bytes; no text writes nothing.
func writeSeen(obj *jsonObject, text string) {
	if text == "" {
		return
	}
	obj.str("seen", strings.ToValidUTF8(text[:min(len(text), MaxSeenText)], "\uFFFD"))
}

// event is the outcome of the call with id in message msg: error when its
// answer says so, else ok (also when there is no answer).
func (a toolAnswers) event(id string, msg int) string {
	for _, ans := range a[id] {
		if ans.msg > msg {
			if ans.failed {
				return "error"
			}
			return "ok"
		}
	}
	return "ok"
}

// tauDir reads a tau2 experiment folder: results.json and simulations/.
func tauDir(dir string) (Input, bool, error) {
	fi, err := os.Stat(filepath.Join(dir, "results.json"))
	if err != nil || !fi.Mode().IsRegular() {
		return Input{}, false, nil
	}
	if fi, err := os.Stat(filepath.Join(dir, tau2SimDir)); err != nil || !fi.IsDir() {
		return Input{}, false, nil
	}
	d := &tau2Dir{dir: dir}
	return Input{Name: dir, Format: FormatTau, Open: d.open, Convert: d.convert, Files: d.files}, true, nil
}

// tau2SimDir is the folder of an experiment's simulation files.
const tau2SimDir = "simulations"

// tau2Dir is an experiment folder read as one input: Open gives its files
// one after another (results.json, then simulations/*.json in name order,
// as tau2's Results.load reads them), so that the input's sha256 covers
// them all, and convert reads them from that stream, file by file.
type tau2Dir struct {
	dir   string
	parts []tau2Part // of the latest open
}

type tau2Part struct {
	name string // relative to dir
	size int64  // bytes it takes in the stream
}

func (d *tau2Dir) open() (io.ReadCloser, error) {
	names, err := d.names()
	if err != nil {
		return nil, err
	}
	d.parts = d.parts[:0]
	var sizes []int64
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(d.dir, n))
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, fi.Size())
	}
	r := &tau2DirReader{d: d, names: names, sizes: sizes}
	return r, nil
}

// files lists the files open reads, as paths under the folder.
func (d *tau2Dir) files() ([]string, error) {
	names, err := d.names()
	for i, n := range names {
		names[i] = filepath.Join(d.dir, n)
	}
	return names, err
}

// names lists the files open reads, relative to the folder, in the order
// it reads them.
func (d *tau2Dir) names() ([]string, error) {
	names := []string{"results.json"}
	ents, err := os.ReadDir(filepath.Join(d.dir, tau2SimDir))
	if err != nil {
		return nil, err
	}
	var sims []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		name := filepath.Join(tau2SimDir, e.Name())
		if !e.Type().IsRegular() {
			// A link is followed, as a file named on the command line
			// is; what is not a file by its name stops the read, as
			// tau2's Results.load would, rather than go unread.
			fi, err := os.Stat(filepath.Join(d.dir, name))
			if err != nil {
				return nil, err
			}
			if fi.IsDir() {
				return nil, fmt.Errorf("%s is a directory, want a simulation file", filepath.Join(d.dir, name))
			}
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s is not a regular file, want a simulation file", filepath.Join(d.dir, name))
			}
		}
		sims = append(sims, name)
	}
	sort.Strings(sims)
	return append(names, sims...), nil
}

// tau2DirReader reads the files of a folder one after another, each as
// long as it was when the folder was opened (a simulation still being
// written is read as far as it was then). A byte order mark at the start
// of a file is left out.
type tau2DirReader struct {
	d     *tau2Dir
	names []string
	sizes []int64
	i     int
	f     *os.File
	left  int64
}

func (r *tau2DirReader) Read(p []byte) (int, error) {
	for {
		if r.f == nil {
			if r.i >= len(r.names) {
				return 0, io.EOF
			}
			f, err := os.Open(filepath.Join(r.d.dir, r.names[r.i]))
			if err != nil {
				return 0, err
			}
			r.f, r.left = f, r.sizes[r.i]
			var bom [3]byte
			if n, _ := io.ReadFull(f, bom[:]); n == 3 && bytes.Equal(bom[:], utf8BOM) {
				r.left -= 3
			} else if _, err := f.Seek(0, io.SeekStart); err != nil {
				return 0, err
			}
			r.d.parts = append(r.d.parts, tau2Part{r.names[r.i], r.left})
		}
		if r.left > 0 {
			n, err := r.f.Read(p[:min(int64(len(p)), r.left)])
			r.left -= int64(n)
			if err == io.EOF && r.left > 0 {
				return n, fmt.Errorf("%s: shorter than when the folder was opened", r.names[r.i])
			}
			if n > 0 || (err != nil && err != io.EOF) {
				return n, err
			}
		}
		r.f.Close()
		r.f = nil
		r.i++
	}
}

func (r *tau2DirReader) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// convert reads the stream open gives: results.json (its info, and the
// simulation_index that says which simulation files there should be),
// then each simulation file. A simulation the index names whose file is
// missing is skipped (a note at its index entry); errors name the file
// within the folder.
func (d *tau2Dir) convert(r io.Reader, w io.Writer, opt ImportOptions) error {
	rw := newRecordWriter(w)
	defer rw.release()
	var obj jsonObject
	info := tau2Info{seen: opt.Seen}
	ids := tau2IDs{}
	indexed := map[string]int{} // simulation id -> line of its index entry
	var order []string
	for pi := 0; ; pi++ {
		if pi >= len(d.parts) {
			// The stream has reached a file open has not started yet:
			// read a byte to make it start.
			var b [1]byte
			n, err := r.Read(b[:])
			if n == 0 && errors.Is(err, io.EOF) {
				break
			}
			if err != nil && n == 0 {
				return err
			}
			r = io.MultiReader(bytes.NewReader(b[:n]), r)
			if pi >= len(d.parts) {
				return fmt.Errorf("%s: reading the folder: lost track of its files", d.dir)
			}
		}
		part := d.parts[pi]
		jr := newJSONReader(io.LimitReader(r, part.size))
		err := jr.items(func(raw json.RawMessage, at int64) error {
			if jsonKind(raw) != '{' {
				return jr.errorAt(at, "want a JSON object")
			}
			if pi == 0 {
				var meta struct {
					Info            tau2Info          `json:"info"`
					Simulations     []json.RawMessage `json:"simulations"`
					SimulationIndex json.RawMessage   `json:"simulation_index"`
				}
				if err := jr.unmarshal(raw, at, &meta); err != nil {
					return err
				}
				info = meta.Info
				info.seen = opt.Seen
				simAt := simulationPlaces(raw, at, meta.Simulations)
				for i, simRaw := range meta.Simulations {
					if err := convertTau2Sim(jr, simRaw, simAt(i), filepath.Join(d.dir, part.name), ids, &info, rw, &obj); err != nil {
						return err
					}
				}
				if k := jsonKind(meta.SimulationIndex); k == 0 || k == 'n' {
					return nil
				}
				return jr.elements(meta.SimulationIndex, at+int64(indexRaw(raw, meta.SimulationIndex)), func(raw json.RawMessage, at int64) error {
					var e struct {
						ID string `json:"id"`
					}
					if err := jr.unmarshal(raw, at, &e); err != nil {
						return err
					}
					if _, dup := indexed[e.ID]; !dup && e.ID != "" {
						line, _ := jr.pr.pos(at)
						indexed[e.ID] = line
						order = append(order, e.ID)
					}
					return nil
				})
			}
			return convertTau2Sim(jr, raw, at, filepath.Join(d.dir, part.name), ids, &info, rw, &obj)
		})
		if err == nil {
			var trailing bool
			if trailing, err = drain(jr.pr.r); err == nil && trailing {
				err = errors.New("more input after the JSON value")
			}
		}
		jr.release()
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(d.dir, part.name), err)
		}
		if pi == 0 {
			for _, id := range order {
				// Files are named by the simulation's id.
				if _, err := os.Stat(filepath.Join(d.dir, tau2SimDir, id+".json")); err == nil {
					continue
				}
				reason := fmt.Sprintf("simulation %s: %s is missing", id, filepath.Join(tau2SimDir, id+".json"))
				if err := writeNote(rw, true, indexed[id], filepath.Join(d.dir, "results.json"), reason); err != nil {
					return err
				}
			}
		}
	}
	return rw.flush()
}
