package mine

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

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
)

// FormatTau is tau-bench (v1) and tau2-bench trajectories.
const FormatTau = "tau"

func init() {
	registerFormat(&Format{
		Name:     FormatTau,
		Detect:   detectTau,
		Priority: 10,
		Convert:  convertTau,
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
	// tau2: the simulations, or the run info that precedes them.
	return s.has("", "simulations") || (s.has("info", "agent_info") && s.has("info", "user_info"))
}

type tau2File struct {
	Info struct {
		AgentInfo struct {
			LLM string `json:"llm"`
		} `json:"agent_info"`
		EnvironmentInfo struct {
			DomainName string `json:"domain_name"`
		} `json:"environment_info"`
	} `json:"info"`
	Simulations []json.RawMessage `json:"simulations"`
}

type tau2Sim struct {
	ID                string          `json:"id"`
	TaskID            json.RawMessage `json:"task_id"`
	Trial             json.RawMessage `json:"trial"`
	TerminationReason string          `json:"termination_reason"`
	RewardInfo        *struct {
		Reward json.RawMessage `json:"reward"`
	} `json:"reward_info"`
	Messages []tau2Msg `json:"messages"`
}

type tau2Msg struct {
	Role      string `json:"role"`
	ID        string `json:"id"`
	Error     *bool  `json:"error"`
	ToolCalls []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"tool_calls"`
	TurnIdx   json.RawMessage `json:"turn_idx"`
	Timestamp string          `json:"timestamp"`
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
				Name string `json:"name"`
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
	var v1 []json.RawMessage
	var v1At []int64
	rw := newRecordWriter(w)
	var obj jsonObject
	sawArray := false
	err := jr.items(func(raw json.RawMessage, at int64) error {
		if jsonKind(raw) != '{' {
			return jr.errorAt(at, "want a tau2 results object or a tau-bench list of runs")
		}
		// Elements of a top-level array are tau-bench v1 runs; the session
		// ids of v1 need the digest of the whole input, so they wait.
		var probe struct {
			Simulations json.RawMessage `json:"simulations"`
			Traj        json.RawMessage `json:"traj"`
		}
		if err := jr.unmarshal(raw, at, &probe); err != nil {
			return err
		}
		switch {
		case probe.Simulations != nil:
			return convertTau2(jr, raw, at, rw, &obj)
		case probe.Traj != nil:
			sawArray = true
			v1 = append(v1, raw)
			v1At = append(v1At, at)
			return nil
		}
		return jr.errorAt(at, "neither tau2 results (no \"simulations\") nor a tau-bench run (no \"traj\")")
	})
	if err != nil {
		return err
	}
	if sawArray {
		// v1 runs are named by task and trial only: prefix the input's
		// digest (its first 8 hex digits, as in the model's source.files)
		// so that runs of different files stay different sessions.
		prefix := hex.EncodeToString(h.Sum(nil))[:8]
		for i, raw := range v1 {
			if err := convertTau1(jr, raw, v1At[i], prefix, rw, &obj); err != nil {
				return err
			}
		}
	}
	return rw.flush()
}

func convertTau2(jr *jsonReader, raw json.RawMessage, at int64, rw *recordWriter, obj *jsonObject) error {
	var f tau2File
	if err := jr.unmarshal(raw, at, &f); err != nil {
		return err
	}
	for _, simRaw := range f.Simulations {
		simAt := at + int64(indexRaw(raw, simRaw))
		var sim tau2Sim
		if err := jr.unmarshal(simRaw, simAt, &sim); err != nil {
			return err
		}
		if sim.ID == "" {
			return jr.errorAt(simAt, "simulation without an id")
		}
		answers := toolAnswers{}
		for i, m := range sim.Messages {
			if m.Role == "tool" {
				answers.add(m.ID, i, m.Error != nil && *m.Error)
			}
		}
		step := int64(0)
		for mi, m := range sim.Messages {
			var ts int64
			hasTS := false
			if m.Timestamp != "" {
				var ok bool
				if ts, ok = parseTimeText(m.Timestamp); !ok {
					return jr.errorAt(simAt, "simulation %s, message %d: timestamp %q is not a time", sim.ID, mi, m.Timestamp)
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
				obj.strNonEmpty("domain", f.Info.EnvironmentInfo.DomainName)
				obj.strNonEmpty("model", f.Info.AgentInfo.LLM)
				if sim.RewardInfo != nil {
					obj.raw("reward", sim.RewardInfo.Reward)
				}
				obj.strNonEmpty("termination", sim.TerminationReason)
				obj.str("actor", m.Role)
				obj.raw("turn_idx", m.TurnIdx)
				step++
				return rw.write(obj.bytes())
			}
			switch {
			case m.Role == "tool" || m.Role == "system":
			case len(m.ToolCalls) > 0:
				for _, c := range m.ToolCalls {
					if c.Name == "" {
						return jr.errorAt(simAt, "simulation %s, message %d: a tool call without a name", sim.ID, mi)
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
				if err := emit("user_msg", "user"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func convertTau1(jr *jsonReader, raw json.RawMessage, at int64, prefix string, rw *recordWriter, obj *jsonObject) error {
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
	answers := toolAnswers{}
	for i, m := range run.Traj {
		if m.Role == "tool" {
			answers.add(m.ToolCallID, i, m.Content != nil && strings.HasPrefix(*m.Content, "Error"))
		}
	}
	step := int64(0)
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
		step++
		return rw.write(obj.bytes())
	}
	for mi, m := range run.Traj {
		switch {
		case m.Role == "tool" || m.Role == "system":
		case len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				if c.Function.Name == "" {
					return jr.errorAt(at, "task %s trial %s, message %d: a tool call without a name", task, trial, mi)
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
			if err := emit("user_msg", "user", m.Role); err != nil {
				return err
			}
		}
	}
	return nil
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
