package rules

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store"
)

func TestTitle(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"first line", "Fix it\nthen more", "Fix it"},
		{"skips blank lines", "\n \n\t  Fix it  \n", "Fix it"},
		{"control characters", "a\tb\x00c", "a b c"},
		{"empty", "", ""},
		{"blank", " \n\t\n", ""},
		{"exactly 80", strings.Repeat("x", 80), strings.Repeat("x", 80)},
		{"cut at 80", strings.Repeat("ab ", 40), strings.TrimSpace(strings.Repeat("ab ", 40)[:79]) + "…"},
		{"multibyte", strings.Repeat("ü", 81), strings.Repeat("ü", 79) + "…"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Title(tc.in)
			if got != tc.want {
				t.Fatalf("Title(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n > store.MaxTitleChars {
				t.Fatalf("title has %d chars", n)
			}
		})
	}
}

func TestCheckEventEffects(t *testing.T) {
	body := func(typ, data string) store.EventIn {
		return store.EventIn{ID: "evt-1", Type: typ, Body: []byte(`{"v":1,"type":"` + typ + `","eventId":"evt-1","data":` + data + `}`)}
	}
	for _, tc := range []struct {
		name string
		ev   store.EventIn
		want Effect
		code errcode.Code
	}{
		{"other type", body("tool.call", `{}`), Effect{}, ""},
		{"turn started", body("turn.started", `{}`), Effect{Status: store.StatusRunning}, ""},
		{"turn completed", body("turn.completed", `{"status":"canceled","usage":{"totalTokens":7}}`), Effect{Status: "canceled", Turns: 1, Tokens: 7}, ""},
		{"turn completed without usage", body("turn.completed", `{"status":"failed"}`), Effect{Status: "failed", Turns: 1}, ""},
		{"user message", body("message.completed", `{"role":"user","content":"hi"}`), Effect{UserText: "hi", HasUserText: true}, ""},
		{"user message without text", body("message.completed", `{"role":"user","content":5}`), Effect{}, ""},
		{"tool message", body("message.completed", `{"role":"tool","content":"x"}`), Effect{}, ""},
		{"turn completed without status", body("turn.completed", `{}`), Effect{}, errcode.SessInvalidRecord},
		{"null body", store.EventIn{ID: "evt-1", Type: "x", Body: []byte("null")}, Effect{}, errcode.SessInvalidRecord},
		{"canonical head, invalid json", store.EventIn{ID: "evt-1", Type: "x", Body: []byte(`{"v":1,"type":"x","eventId":"evt-1","data":}`)}, Effect{}, errcode.SessInvalidRecord},
		{"canonical head, other type", store.EventIn{ID: "evt-1", Type: "y", Body: []byte(`{"v":1,"type":"x","eventId":"evt-1","data":{}}`)}, Effect{}, errcode.SessInvalidRecord},
		{"canonical summary type", store.EventIn{ID: "evt-1", Type: "turn.started", Body: []byte(`{"v":1,"type":"turn.started","eventId":"evt-1","data":{}}`)}, Effect{Status: store.StatusRunning}, ""},
		{"nested type only", store.EventIn{ID: "evt-1", Type: "x", Body: []byte(`{"data":{"type":"x","eventId":"evt-1"}}`)}, Effect{}, errcode.SessInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckEvent("test", tc.ev)
			if errcode.Of(err) != tc.code {
				t.Fatalf("code %q, want %q (%v)", errcode.Of(err), tc.code, err)
			}
			if got != tc.want {
				t.Fatalf("effect %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzCheckEvent: any input is either refused with SESS_INVALID_RECORD or
// is a valid JSON object that starts in canonical form or names the
// record's type and ID.
func FuzzCheckEvent(f *testing.F) {
	f.Add("turn.completed", []byte(`{"type":"turn.completed","eventId":"evt-1","data":{"status":"completed","usage":{"totalTokens":3}}}`))
	f.Add("message.completed", []byte(`{"type":"message.completed","eventId":"evt-1","data":{"role":"user","content":"x\ny"}}`))
	f.Add("x", []byte(`{"type":"x","eventId":"evt-1"}`))
	f.Fuzz(func(t *testing.T, typ string, body []byte) {
		eff, err := CheckEvent("fuzz", store.EventIn{ID: "evt-1", Type: typ, Body: body})
		if err != nil {
			if code := errcode.Of(err); code != errcode.SessInvalidRecord {
				t.Fatalf("code %s", code)
			}
			return
		}
		var env struct {
			Type    string `json:"type"`
			EventID string `json:"eventId"`
		}
		if !json.Valid(body) || body[0] != '{' || (!event.CanonicalHead(body, typ, "evt-1") && (json.Unmarshal(body, &env) != nil || env.Type != typ || env.EventID != "evt-1")) {
			t.Fatalf("accepted %q for type %q", body, typ)
		}
		if eff.Turns < 0 || eff.Tokens < 0 {
			t.Fatalf("negative effect %+v", eff)
		}
	})
}

// The plain-metadata fast path reads exactly what json.Unmarshal reads,
// and leaves every other text to it.
func TestDecodePlainMetadata(t *testing.T) {
	for _, s := range []string{`{}`, `{"model":"m","root":"/home/dev/project"}`, `{"a":""}`, `{"é":"ü"}`, `{"a":"1","a":"2"}`} {
		md, ok := decodePlainMetadata(s)
		var want map[string]string
		if err := json.Unmarshal([]byte(s), &want); err != nil || !ok || !maps.Equal(md, want) {
			t.Errorf("%s: fast path %v, %v; json.Unmarshal %v, %v", s, md, ok, want, err)
		}
	}
	for _, s := range []string{`{"a":"\n"}`, `{"a":"x\u0041"}`, `{ "a":"b"}`, `{"a":1}`, `{"a":"b",}`, `{"a":"b"}x`, "{\"a\":\"\xff\"}", `{"a"}`, `[]`, ``} {
		if md, ok := decodePlainMetadata(s); ok {
			t.Errorf("%s: fast path took it: %v", s, md)
		}
	}
}

func FuzzDecodePlainMetadata(f *testing.F) {
	for _, s := range []string{`{}`, `{"model":"m","root":"/p"}`, `{"a":"b",}`, `{"a":"\u0041"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		md, ok := decodePlainMetadata(s)
		if !ok {
			return
		}
		want := map[string]string{}
		if err := json.Unmarshal([]byte(s), &want); err != nil || !maps.Equal(md, want) {
			t.Fatalf("%q: fast path %v; json.Unmarshal %v, %v", s, md, want, err)
		}
	})
}
