package event

import (
	"encoding/json"
	"fmt"

	"github.com/harness-dev/harness/internal/errcode"
)

// This file is what readers that do not decode a whole event need to know
// of its fields: the canonical envelope's first bytes, the turn an event
// belongs to, and the few data fields a store's session summary reads. It
// lives here, beside the schema, so that the field names are known in one
// package.

// CanonicalHead reports whether body starts the way Encode writes an event
// of type typ and ID id: {"v":1,"type":TYPE,"eventId":ID, — both needing
// no JSON escape. A body that does is a canonical frame's envelope as far
// as type and eventId go.
func CanonicalHead(body []byte, typ, id string) bool {
	plain := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	if !plain(typ) || !plain(id) {
		return false
	}
	b := body
	for _, part := range [...]string{`{"v":1,"type":"`, typ, `","eventId":"`, id, `",`} {
		if len(b) < len(part) || string(b[:len(part)]) != part {
			return false
		}
		b = b[len(part):]
	}
	return true
}

// TurnOf returns data.turnId of an envelope without a full decode, "" when
// it has none.
func TurnOf(body []byte) string {
	var env struct {
		Data struct {
			TurnID string `json:"turnId"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &env)
	return env.Data.TurnID
}

// Summary is what one event tells a session's summary: a turn started, a
// turn ended with a status and its total tokens, or a user message (a title
// candidate).
type Summary struct {
	TurnStarted bool
	// TurnStatus is data.status of turn.completed, "" for other events.
	TurnStatus  string
	TotalTokens int64
	UserText    string
	HasUserText bool
}

// SummaryReads reports whether Summarize reads the data of events of type
// t; for other types it reads only the envelope.
func SummaryReads(t Type) bool {
	return t == TypeTurnStarted || t == TypeTurnCompleted || t == TypeMessageCompleted
}

// Summarize reads the envelope of body — a JSON object whose type and
// eventId must equal typ and id — and, for turn.started, turn.completed and
// message.completed, the data fields a session summary needs. It does not
// validate the rest of the event. Code: EVENT_NOT_OBJECT for a body that is
// no JSON object, whose envelope differs from typ and id, or whose
// turn.completed lacks data.status or a usage.totalTokens >= 0.
func Summarize(body []byte, typ, id string) (Summary, error) {
	var env struct {
		Type    *string         `json:"type"`
		EventID *string         `json:"eventId"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return Summary{}, &errcode.Error{Code: errcode.EventNotObject, Message: fmt.Sprintf("summarize event %s: body is not a JSON object", id), Err: err}
	}
	if env.Type == nil || *env.Type != typ || env.EventID == nil || *env.EventID != id {
		return Summary{}, errcode.Errorf(errcode.EventNotObject, "summarize event %s: body type and eventId differ from the record's", id)
	}
	switch Type(typ) {
	case TypeTurnStarted:
		return Summary{TurnStarted: true}, nil
	case TypeTurnCompleted:
		var d struct {
			Status string `json:"status"`
			Usage  struct {
				TotalTokens int64 `json:"totalTokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(env.Data, &d); err != nil || d.Status == "" || d.Usage.TotalTokens < 0 {
			return Summary{}, &errcode.Error{Code: errcode.EventNotObject, Message: fmt.Sprintf("summarize event %s: turn.completed needs data.status and data.usage.totalTokens >= 0", id), Err: err}
		}
		return Summary{TurnStatus: d.Status, TotalTokens: d.Usage.TotalTokens}, nil
	case TypeMessageCompleted:
		var d struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(env.Data, &d); err != nil {
			return Summary{}, &errcode.Error{Code: errcode.EventNotObject, Message: fmt.Sprintf("summarize event %s: message.completed data is not an object", id), Err: err}
		}
		var text string
		if d.Role != "user" || json.Unmarshal(d.Content, &text) != nil {
			return Summary{}, nil
		}
		return Summary{UserText: text, HasUserText: true}, nil
	}
	return Summary{}, nil
}
