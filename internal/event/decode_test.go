package event_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// sub replaces the one occurrence of old in base.
func sub(t *testing.T, base, old, new string) string {
	t.Helper()
	if n := strings.Count(base, old); n != 1 {
		t.Fatalf("%q occurs %d times in %s", old, n, base)
	}
	return strings.Replace(base, old, new, 1)
}

func TestDecodeRejects(t *testing.T) {
	var (
		ts      = goldenLine(t, "turn.started")
		user    = goldenLine(t, "message.completed/user")
		asst    = goldenLine(t, "message.completed/assistant")
		toolMsg = goldenLine(t, "message.completed/tool")
		delta   = goldenLine(t, "message.delta")
		steer   = goldenLine(t, "steering.queued")
		applied = goldenLine(t, "steering.applied")
		acc     = goldenLine(t, "context.accounted")
		ckpt    = goldenLine(t, "context.checkpoint")
		rtc     = goldenLine(t, "runtime.checkpoint")
		mreq    = goldenLine(t, "model.request")
		mresp   = goldenLine(t, "model.response")
		tcall   = goldenLine(t, "tool.call")
		pol     = goldenLine(t, "policy.decision")
		preq    = goldenLine(t, "permission.requested")
		pwrite  = goldenLine(t, "permission.requested/write")
		pres    = goldenLine(t, "permission.resolved")
		tres    = goldenLine(t, "tool.result")
		terr    = goldenLine(t, "tool.result/error")
		budget  = goldenLine(t, "budget.warning")
		ws      = goldenLine(t, "workspace.lifecycle")
		tdone   = goldenLine(t, "turn.completed")
		stop    = goldenLine(t, "agent.stopped")
		inq     = goldenLine(t, "input.queued")
		retry   = goldenLine(t, "model.retry")
	)
	tooLong := strings.Repeat("é", event.MaxContentRunes+1)
	tests := []struct {
		name string
		in   string
		want errcode.Code
	}{
		// Not one JSON object.
		{"empty", "", errcode.EventNotObject},
		{"blank", " \n", errcode.EventNotObject},
		{"null", "null", errcode.EventNotObject},
		{"array", "[" + ts + "]", errcode.EventNotObject},
		{"string", `"turn.started"`, errcode.EventNotObject},
		{"number", "1", errcode.EventNotObject},
		{"truncated", ts[:len(ts)-1], errcode.EventNotObject},
		{"trailing comma", sub(t, ts, `"msg-u1"}`, `"msg-u1",}`), errcode.EventNotObject},
		{"second object", ts + ts, errcode.EventNotObject},
		{"second object after newline", ts + "\n" + ts, errcode.EventNotObject},
		{"trailing garbage", ts + "x", errcode.EventNotObject},
		{"invalid UTF-8 in a string", sub(t, ts, "msg-u1", "msg-\xff"), errcode.EventNotObject},
		{"invalid UTF-8 in raw input", sub(t, tcall, `"cmd/main.go"}`, "\"cmd/\xc3\"}"), errcode.EventNotObject},
		{"syntax error deep in data", sub(t, tcall, `{"path":"cmd/main.go"}`, `{"path":tru}`), errcode.EventNotObject},

		// Version, checked before keys so a newer frame says so.
		{"v 2", sub(t, ts, `"v":1`, `"v":2`), errcode.EventVersion},
		{"v 0", sub(t, ts, `"v":1`, `"v":0`), errcode.EventVersion},
		{"v negative", sub(t, ts, `"v":1`, `"v":-1`), errcode.EventVersion},
		{"v fraction", sub(t, ts, `"v":1`, `"v":1.5`), errcode.EventVersion},
		{"v string", sub(t, ts, `"v":1`, `"v":"1"`), errcode.EventVersion},
		{"v bool", sub(t, ts, `"v":1`, `"v":true`), errcode.EventVersion},
		{"v 2 with new keys", sub(t, ts, `"v":1,`, `"v":2,"seq":4,`), errcode.EventVersion},
		{"v absent", sub(t, ts, `"v":1,`, ``), errcode.EventMissingField},
		{"v null", sub(t, ts, `"v":1`, `"v":null`), errcode.EventMissingField},

		// Envelope keys.
		{"duplicate envelope key", sub(t, ts, `"actor":"kernel",`, `"actor":"kernel","actor":"kernel",`), errcode.EventInvalidField},
		{"duplicate v", sub(t, ts, `"v":1,`, `"v":1,"v":1,`), errcode.EventInvalidField},
		{"duplicate key by escape", sub(t, ts, `"actor":"kernel",`, `"actor":"kernel","\u0061ctor":"kernel",`), errcode.EventInvalidField},
		{"unknown envelope key", sub(t, ts, `"v":1,`, `"v":1,"seq":3,`), errcode.EventUnknownKey},
		{"envelope key case", sub(t, ts, `"type":`, `"Type":`), errcode.EventUnknownKey},
		{"envelope key case eventId", sub(t, ts, `"eventId":`, `"eventID":`), errcode.EventUnknownKey},
		{"type absent", sub(t, ts, `"type":"turn.started",`, ``), errcode.EventMissingField},
		{"eventId absent", sub(t, ts, `"eventId":"evt-0196f0d0-3b1a-7c00-8000-0000000000a2",`, ``), errcode.EventMissingField},
		{"at absent", sub(t, ts, `"at":"2026-11-29T20:41:23.123Z",`, ``), errcode.EventMissingField},
		{"actor absent", sub(t, ts, `"actor":"kernel",`, ``), errcode.EventMissingField},
		{"data absent", sub(t, ts, `,"data":{"runId":"run-a1","sessionId":"sess-a1","turnId":"turn-a1","inputMessageId":"msg-u1"}`, ``), errcode.EventMissingField},
		{"data null", sub(t, ts, `{"runId":"run-a1","sessionId":"sess-a1","turnId":"turn-a1","inputMessageId":"msg-u1"}`, `null`), errcode.EventMissingField},
		{"actor null", sub(t, ts, `"actor":"kernel"`, `"actor":null`), errcode.EventMissingField},

		// Type.
		{"unknown type", sub(t, ts, `"turn.started"`, `"turn.begun"`), errcode.EventUnknownType},
		{"empty type", sub(t, ts, `"turn.started"`, `""`), errcode.EventUnknownType},
		{"type case", sub(t, ts, `"turn.started"`, `"Turn.Started"`), errcode.EventUnknownType},
		{"type with space", sub(t, ts, `"turn.started"`, `"turn.started "`), errcode.EventUnknownType},
		{"type number", sub(t, ts, `"turn.started"`, `7`), errcode.EventInvalidField},

		// Other envelope values.
		{"eventId wrong prefix", sub(t, ts, `"evt-0196f0d0`, `"msg-0196f0d0`), errcode.EventInvalidField},
		{"eventId bare prefix", sub(t, ts, `"evt-0196f0d0-3b1a-7c00-8000-0000000000a2"`, `"evt-"`), errcode.EventInvalidField},
		{"eventId number", sub(t, ts, `"evt-0196f0d0-3b1a-7c00-8000-0000000000a2"`, `12`), errcode.EventInvalidField},
		{"at garbage", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `"yesterday"`), errcode.EventInvalidField},
		{"at month 13", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `"2026-13-29T20:41:23.123Z"`), errcode.EventInvalidField},
		{"at zero time", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `"0001-01-01T00:00:00.000Z"`), errcode.EventInvalidField},
		{"at number", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `1764448883123`), errcode.EventInvalidField},
		{"actor unknown", sub(t, ts, `"kernel"`, `"robot"`), errcode.EventInvalidField},
		{"actor empty", sub(t, ts, `"kernel"`, `""`), errcode.EventInvalidField},
		{"actor case", sub(t, ts, `"kernel"`, `"Kernel"`), errcode.EventInvalidField},
		{"data array", sub(t, ts, `{"runId":"run-a1","sessionId":"sess-a1","turnId":"turn-a1","inputMessageId":"msg-u1"}`, `[]`), errcode.EventInvalidField},
		{"data string", sub(t, ts, `{"runId":"run-a1","sessionId":"sess-a1","turnId":"turn-a1","inputMessageId":"msg-u1"}`, `"x"`), errcode.EventInvalidField},

		// Data keys.
		{"unknown data key", sub(t, ts, `"inputMessageId"`, `"extra":1,"inputMessageId"`), errcode.EventUnknownKey},
		{"data key case", sub(t, ts, `"turnId"`, `"TurnId"`), errcode.EventUnknownKey},
		{"data key of another type", sub(t, ts, `"inputMessageId"`, `"messageId":"msg-1","inputMessageId"`), errcode.EventUnknownKey},
		{"unknown key in toolCalls entry", sub(t, asst, `"name":"fs.read",`, `"name":"fs.read","type":"function",`), errcode.EventUnknownKey},
		{"key case in toolCalls entry", sub(t, asst, `"arguments"`, `"Arguments"`), errcode.EventUnknownKey},
		{"unknown key in usage", sub(t, mresp, `"totalTokens":1234`, `"totalTokens":1234,"cachedTokens":0`), errcode.EventUnknownKey},
		{"unknown key in error", sub(t, terr, `"code":`, `"retryable":false,"code":`), errcode.EventUnknownKey},
		{"unknown key in tail message", sub(t, ckpt, `{"role":"system"`, `{"ID":"m","role":"system"`), errcode.EventUnknownKey},
		{"duplicate data key", sub(t, ts, `"turnId":"turn-a1",`, `"turnId":"turn-a1","turnId":"turn-a1",`), errcode.EventInvalidField},
		{"duplicate nested key", sub(t, mresp, `"totalTokens":1234`, `"totalTokens":1234,"totalTokens":1234`), errcode.EventInvalidField},
		{"data key absent", sub(t, ts, `"turnId":"turn-a1",`, ``), errcode.EventMissingField},
		{"data key null", sub(t, ts, `"turnId":"turn-a1"`, `"turnId":null`), errcode.EventMissingField},
		{"usage key absent", sub(t, mresp, `,"totalTokens":1234`, ``), errcode.EventMissingField},
		{"usage null", sub(t, mresp, `{"promptTokens":1200,"completionTokens":34,"totalTokens":1234}`, `null`), errcode.EventMissingField},
		{"toolCalls arguments absent", sub(t, asst, `,"arguments":{"path":"cmd/main.go"}`, ``), errcode.EventMissingField},
		{"toolCalls arguments null", sub(t, asst, `"arguments":{"path":"cmd/main.go"}`, `"arguments":null`), errcode.EventMissingField},
		{"error code absent", sub(t, terr, `"code":"WORKSPACE_ISOLATION_REQUIRED",`, ``), errcode.EventMissingField},
		{"tool.call input null", sub(t, tcall, `{"path":"cmd/main.go"}`, `null`), errcode.EventMissingField},
		{"payload absent", sub(t, rtc, `,"payload":{"identity":{"phase":"model","sessionTurns":["turn-a1"]},"history":{"version":1,"revision":5}}`, ``), errcode.EventMissingField},
		{"tail role absent", sub(t, ckpt, `{"role":"system",`, `{`), errcode.EventMissingField},

		// JSON kinds.
		{"id number", sub(t, ts, `"turn-a1"`, `7`), errcode.EventInvalidField},
		{"id object", sub(t, ts, `"turn-a1"`, `{}`), errcode.EventInvalidField},
		{"count string", sub(t, delta, `"sequence":0`, `"sequence":"0"`), errcode.EventInvalidField},
		{"count fraction", sub(t, delta, `"sequence":0`, `"sequence":1.5`), errcode.EventInvalidField},
		{"count with fraction zero", sub(t, delta, `"sequence":0`, `"sequence":1.0`), errcode.EventInvalidField},
		{"count exponent", sub(t, delta, `"sequence":0`, `"sequence":1e2`), errcode.EventInvalidField},
		{"count overflow", sub(t, delta, `"sequence":0`, `"sequence":99999999999999999999`), errcode.EventInvalidField},
		{"bool string", sub(t, tres, `"ok":true`, `"ok":"true"`), errcode.EventInvalidField},
		{"bool number", sub(t, acc, `"summaryRequest":true`, `"summaryRequest":1`), errcode.EventInvalidField},
		{"toolCalls object", sub(t, asst, `[{"id":"call_9f2","name":"fs.read","arguments":{"path":"cmd/main.go"}}]`, `{"id":"call_9f2"}`), errcode.EventInvalidField},
		{"toolCalls null entry", sub(t, asst, `"toolCalls":[`, `"toolCalls":[null,`), errcode.EventInvalidField},
		{"messageIds string", sub(t, applied, `["msg-s1","msg-s2"]`, `"msg-s1"`), errcode.EventInvalidField},
		{"messageIds number entry", sub(t, applied, `["msg-s1","msg-s2"]`, `["msg-s1",2]`), errcode.EventInvalidField},
		{"usage array", sub(t, mresp, `{"promptTokens":1200,"completionTokens":34,"totalTokens":1234}`, `[]`), errcode.EventInvalidField},
		{"error string", sub(t, terr, `{"code":"WORKSPACE_ISOLATION_REQUIRED","message":"fs.write needs a Docker workspace"}`, `"WORKSPACE_ISOLATION_REQUIRED"`), errcode.EventInvalidField},
		{"files string", sub(t, ws, `"files":0`, `"files":"0"`), errcode.EventInvalidField},

		// Rules.
		{"empty id", sub(t, ts, `"turn-a1"`, `""`), errcode.EventInvalidField},
		{"negative sequence", sub(t, delta, `"sequence":0`, `"sequence":-1`), errcode.EventInvalidField},
		{"negative tokens", sub(t, acc, `"reserveTokens":8192`, `"reserveTokens":-8192`), errcode.EventInvalidField},
		{"negative usage", sub(t, mresp, `"promptTokens":1200`, `"promptTokens":-1`), errcode.EventInvalidField},
		{"negative duration", sub(t, tres, `"durationMs":3`, `"durationMs":-3`), errcode.EventInvalidField},
		{"negative files", sub(t, ws, `"files":0`, `"files":-1`), errcode.EventInvalidField},
		{"role system", sub(t, user, `"role":"user"`, `"role":"system"`), errcode.EventInvalidField},
		{"role unknown", sub(t, user, `"role":"user"`, `"role":"developer"`), errcode.EventInvalidField},
		{"finishReason unknown", sub(t, asst, `"finishReason":"tool_calls"`, `"finishReason":"done"`), errcode.EventInvalidField},
		{"model.response finishReason unknown", sub(t, mresp, `"finishReason":"tool_calls"`, `"finishReason":"function_call"`), errcode.EventInvalidField},
		{"assistant without requestId", sub(t, asst, `"requestId":"req-1",`, ``), errcode.EventMissingField},
		{"assistant without finishReason", sub(t, asst, `"finishReason":"tool_calls",`, ``), errcode.EventMissingField},
		{"assistant with name", sub(t, asst, `"Reading it.",`, `"Reading it.","name":"fs.read",`), errcode.EventInvalidField},
		{"assistant with toolCallId", sub(t, asst, `}]}}`, `}],"toolCallId":"call_9f2"}}`), errcode.EventInvalidField},
		{"assistant duplicate tool call id", sub(t, asst, `}]}}`, `},{"id":"call_9f2","name":"fs.list","arguments":{}}]}}`), errcode.EventInvalidField},
		{"assistant tool call empty name", sub(t, asst, `"name":"fs.read"`, `"name":""`), errcode.EventInvalidField},
		{"tool without toolCallId", sub(t, toolMsg, `,"toolCallId":"call_9f2"`, ``), errcode.EventMissingField},
		{"tool without name", sub(t, toolMsg, `,"name":"fs.read"`, ``), errcode.EventMissingField},
		{"tool with finishReason", sub(t, toolMsg, `,"name":"fs.read"`, `,"finishReason":"stop","name":"fs.read"`), errcode.EventInvalidField},
		{"user with requestId", sub(t, user, `✓ \u2028"`, `✓ \u2028","requestId":"req-1"`), errcode.EventInvalidField},
		{"user with toolCalls", sub(t, user, `✓ \u2028"`, `✓ \u2028","toolCalls":[{"id":"c","name":"fs.read","arguments":{}}]`), errcode.EventInvalidField},
		{"user with toolCallId", sub(t, user, `✓ \u2028"`, `✓ \u2028","toolCallId":"c"`), errcode.EventInvalidField},
		{"steering content empty", sub(t, steer, `"also update the README"`, `""`), errcode.EventInvalidField},
		{"steering content too long", sub(t, steer, `"also update the README"`, `"`+tooLong+`"`), errcode.EventInvalidField},
		{"input content empty", sub(t, inq, `"then run the tests"`, `""`), errcode.EventInvalidField},
		{"messageIds empty", sub(t, applied, `["msg-s1","msg-s2"]`, `[]`), errcode.EventInvalidField},
		{"messageIds repeated", sub(t, applied, `["msg-s1","msg-s2"]`, `["msg-s1","msg-s1"]`), errcode.EventInvalidField},
		{"messageIds empty entry", sub(t, applied, `["msg-s1","msg-s2"]`, `["msg-s1",""]`), errcode.EventInvalidField},
		{"algorithm unknown", sub(t, acc, `"utf8-upper-bound/v1"`, `"tiktoken"`), errcode.EventInvalidField},
		{"checkpoint version 2", sub(t, ckpt, `"version":1`, `"version":2`), errcode.EventInvalidField},
		{"checkpoint summary empty", sub(t, ckpt, `"summary":"The user wants a --verbose flag."`, `"summary":""`), errcode.EventInvalidField},
		{"tail role unknown", sub(t, ckpt, `"role":"system"`, `"role":"robot"`), errcode.EventInvalidField},
		{"tail tool calls on a tool message", sub(t, ckpt, `"toolCallId":"call_9f2","name":"fs.read"}`, `"toolCalls":[{"id":"x","name":"y","arguments":{}}],"toolCallId":"call_9f2","name":"fs.read"}`), errcode.EventInvalidField},
		{"tail tool message without toolCallId", sub(t, ckpt, `"toolCallId":"call_9f2","name":"fs.read"}`, `"name":"fs.read"}`), errcode.EventMissingField},
		{"tail name on a system message", sub(t, ckpt, `"content":"Conversation summary (v1): …"`, `"content":"Conversation summary (v1): …","name":"x"`), errcode.EventInvalidField},
		{"runtime checkpoint version 0", sub(t, rtc, `"version":1,"payload"`, `"version":0,"payload"`), errcode.EventInvalidField},
		{"runtime checkpoint payload array", sub(t, rtc, `{"identity":{"phase":"model","sessionTurns":["turn-a1"]},"history":{"version":1,"revision":5}}`, `[]`), errcode.EventInvalidField},
		{"contextVersion 0", sub(t, mreq, `"contextVersion":1`, `"contextVersion":0`), errcode.EventInvalidField},
		{"effect unknown", sub(t, pol, `"effect":"allow"`, `"effect":"maybe"`), errcode.EventInvalidField},
		{"action empty", sub(t, pol, `"action":"fs.read"`, `"action":""`), errcode.EventInvalidField},
		{"scope unknown", sub(t, preq, `"scope":"once"`, `"scope":"forever"`), errcode.EventInvalidField},
		{"question input null", sub(t, pwrite, `"input":{"contents":"one\nTWO\n","path":"notes.txt"}`, `"input":null`), errcode.EventMissingField},
		{"question patch not a string", sub(t, pwrite, `"patch":"--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"`, `"patch":7`), errcode.EventInvalidField},
		{"question patch of an exec", sub(t, pwrite, `"action":"fs.write"`, `"action":"process.exec"`), errcode.EventInvalidField},
		{"question lines negative", sub(t, pwrite, `"deleted":1`, `"deleted":-1`), errcode.EventInvalidField},
		{"question lines unknown key", sub(t, pwrite, `"deleted":1`, `"deleted":1,"moved":0`), errcode.EventUnknownKey},
		{"decision unknown", sub(t, pres, `"decision":"allow"`, `"decision":"ask"`), errcode.EventInvalidField},
		{"ok with error", sub(t, tres, `"durationMs"`, `"error":{"code":"TOOL_CANCELED","message":"canceled"},"durationMs"`), errcode.EventInvalidField},
		{"not ok without error", sub(t, terr, `"error":{"code":"WORKSPACE_ISOLATION_REQUIRED","message":"fs.write needs a Docker workspace"},`, ``), errcode.EventMissingField},
		{"error code lower case", sub(t, terr, `"WORKSPACE_ISOLATION_REQUIRED"`, `"workspace_isolation_required"`), errcode.EventInvalidField},
		{"error message empty", sub(t, terr, `"fs.write needs a Docker workspace"`, `""`), errcode.EventInvalidField},
		{"metric unknown", sub(t, budget, `"tokens"`, `"dollars"`), errcode.EventInvalidField},
		{"backend unknown", sub(t, ws, `"docker"`, `"podman"`), errcode.EventInvalidField},
		{"phase unknown", sub(t, ws, `"opened"`, `"paused"`), errcode.EventInvalidField},
		{"skipped unknown key", sub(t, ws, `"paths":[`, `"first":[],"paths":[`), errcode.EventUnknownKey},
		{"skipped count string", sub(t, ws, `"count":3`, `"count":"3"`), errcode.EventInvalidField},
		{"skipped sum off", sub(t, ws, `"count":3`, `"count":5`), errcode.EventInvalidField},
		{"status unknown", sub(t, tdone, `"completed"`, `"done"`), errcode.EventInvalidField},
		{"failed and truncated", sub(t, sub(t, tdone, `"status":"completed",`, `"status":"failed","errorCode":"INTERNAL",`), `"note":"done"`, `"note":"done","truncated":true`), errcode.EventInvalidField},
		{"tool message with reasoning", sub(t, toolMsg, `,"name":"fs.read"`, `,"name":"fs.read","reasoning":"hm"`), errcode.EventInvalidField},
		{"reasoning field without reasoning", sub(t, asst, `}]}}`, `}],"reasoningField":"reasoning"}}`), errcode.EventInvalidField},
		{"completed with errorCode", sub(t, tdone, `"status":"completed",`, `"status":"completed","errorCode":"INTERNAL",`), errcode.EventInvalidField},
		{"failed without errorCode", sub(t, tdone, `"status":"completed",`, `"status":"failed",`), errcode.EventMissingField},
		{"budget_exceeded without errorCode", sub(t, tdone, `"status":"completed",`, `"status":"budget_exceeded",`), errcode.EventMissingField},
		{"errorCode malformed", sub(t, tdone, `"status":"completed",`, `"status":"failed","errorCode":"oops",`), errcode.EventInvalidField},
		{"agent.stopped status unknown", sub(t, stop, `"completed"`, `"stopped"`), errcode.EventInvalidField},
		{"retry attempt 0", sub(t, retry, `"attempt":1`, `"attempt":0`), errcode.EventInvalidField},
		{"retry code malformed", sub(t, retry, `"MODEL_RATE_LIMITED"`, `"rate limited"`), errcode.EventInvalidField},

		// Valid values, non-canonical bytes.
		{"leading space", " " + ts, errcode.EventNonCanonical},
		{"trailing newline", ts + "\n", errcode.EventNonCanonical},
		{"space after colon", sub(t, ts, `"v":1`, `"v": 1`), errcode.EventNonCanonical},
		{"envelope key order", sub(t, ts, `{"v":1,"type":"turn.started",`, `{"type":"turn.started","v":1,`), errcode.EventNonCanonical},
		{"data key order", sub(t, ts, `"runId":"run-a1","sessionId":"sess-a1"`, `"sessionId":"sess-a1","runId":"run-a1"`), errcode.EventNonCanonical},
		{"nested key order", sub(t, mresp, `"promptTokens":1200,"completionTokens":34`, `"completionTokens":34,"promptTokens":1200`), errcode.EventNonCanonical},
		{"v 1.0", sub(t, ts, `"v":1`, `"v":1.0`), errcode.EventNonCanonical},
		{"v 1e0", sub(t, ts, `"v":1`, `"v":1e0`), errcode.EventNonCanonical},
		{"negative zero", sub(t, delta, `"sequence":0`, `"sequence":-0`), errcode.EventNonCanonical},
		{"unicode escape in value", sub(t, ts, `"msg-u1"`, `"msg-\u00751"`), errcode.EventNonCanonical},
		{"unicode escape in key", sub(t, ts, `"turnId"`, `"turn\u0049d"`), errcode.EventNonCanonical},
		{"escaped slash", sub(t, tcall, `"tool":"fs.read"`, `"tool":"fs.read\/"`), errcode.EventNonCanonical},
		{"HTML escape", sub(t, user, `<b>`, `\u003cb>`), errcode.EventNonCanonical},
		{"raw line separator", sub(t, user, `\u2028`, "\u2028"), errcode.EventNonCanonical},
		{"type by escape", sub(t, ts, `"turn.started"`, `"turn\u002estarted"`), errcode.EventNonCanonical},
		{"at with offset", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `"2026-11-29T21:41:23.123+01:00"`), errcode.EventNonCanonical},
		{"at zero offset", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `"2026-11-29T20:41:23.123+00:00"`), errcode.EventNonCanonical},
		{"at without milliseconds", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `"2026-11-29T20:41:23Z"`), errcode.EventNonCanonical},
		{"at with microseconds", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `"2026-11-29T20:41:23.123000Z"`), errcode.EventNonCanonical},
		{"at with nanoseconds", sub(t, ts, `"2026-11-29T20:41:23.123Z"`, `"2026-11-29T20:41:23.123456789Z"`), errcode.EventNonCanonical},
		{"optional empty string", sub(t, pol, `"subject":"cmd/main.go"`, `"subject":""`), errcode.EventNonCanonical},
		{"optional null", sub(t, ws, `"files":0`, `"files":null`), errcode.EventNonCanonical},
		{"optional empty array", sub(t, asst, `[{"id":"call_9f2","name":"fs.read","arguments":{"path":"cmd/main.go"}}]`, `[]`), errcode.EventNonCanonical},
		{"optional false", sub(t, mresp, `"totalTokens":1234`, `"totalTokens":1234,"estimated":false`), errcode.EventNonCanonical},
		{"space inside raw input", sub(t, tcall, `{"path":"cmd/main.go"}`, `{"path": "cmd/main.go"}`), errcode.EventNonCanonical},
		{"space inside raw arguments", sub(t, asst, `{"path":"cmd/main.go"}`, `{ "path":"cmd/main.go" }`), errcode.EventNonCanonical},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := event.Decode([]byte(tt.in))
			if got := errcode.Of(err); got != tt.want {
				t.Fatalf("Decode: code %q (%v), want %q", got, err, tt.want)
			}
			if diff := cmp.Diff(event.Event{}, ev); diff != "" {
				t.Errorf("Decode returned an event with its error (-want +got):\n%s", diff)
			}
			if _, err := event.DecodeStrict([]byte(tt.in)); errcode.Of(err) != tt.want {
				t.Errorf("DecodeStrict: code %q (%v), want %q", errcode.Of(err), err, tt.want)
			}
		})
	}
}

// context.accounted takes each of the three occupancy rules.
func TestDecodeAlgorithms(t *testing.T) {
	acc := goldenLine(t, "context.accounted")
	for _, a := range []string{event.AlgorithmUTF8UpperBound, event.AlgorithmBytesPerToken, event.AlgorithmCharMix, event.AlgorithmReportedUsage} {
		line := sub(t, acc, `"utf8-upper-bound/v1"`, `"`+a+`"`)
		ev, err := event.Decode([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if d := ev.Data.(event.ContextAccounted); d.Algorithm != a {
			t.Errorf("algorithm %s decoded as %s", a, d.Algorithm)
		}
	}
}
