// Command tokencount measures the occupancy estimate before any usage
// report (the meter's estimate by character mix, char-mix/v1) and the byte count
// (utf8-upper-bound/v1) against real token counts, and prints the estimate
// table of BENCHMARKS.md ("Context estimate"):
//
//   - requests that read each file of a repository (system prompt, tools,
//     a user message, an fs.read call and its result, as the meter counts
//     them) against o200k_base and cl100k_base tokens of the same request
//     rendered as a chat (each message's text plus 4 tokens, the tools as
//     JSON);
//   - the recorded server streams (../shared/quirks/streams): their
//     streamed text against the completion tokens the server reported
//     (their requests are not recorded, so their prompt tokens cannot be).
//
// It is its own module so that the tokenizer never enters Harness:
//
//	cd scripts/tokencount && go run . ../.. ../../../shared/quirks/streams
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/openai"
	"github.com/harness-dev/harness/tools"
	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: tokencount REPO STREAMS")
		os.Exit(2)
	}
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	fmt.Println("| sample | requests | real tokens | utf8-upper-bound/v1 | char-mix/v1 |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: |")
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		enc, err := tiktoken.GetEncoding(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		files(os.Args[1], name, enc)
	}
	streams(os.Args[2])
}

func canon(v any) string { b, _ := model.MarshalCanonical(v); return string(b) }

func dev(est, real int) string { return fmt.Sprintf("%+.0f %%", 100*(float64(est)/float64(real)-1)) }

type sums struct{ n, bytes, tokens, est int }

func (s *sums) add(bytes, est, tokens int) {
	s.n++
	s.bytes += bytes
	s.tokens += tokens
	s.est += est
}

func files(root, name string, enc *tiktoken.Tiktoken) {
	toks := func(s string) int { return len(enc.Encode(s, nil, nil)) }
	specs := tools.ModelSpecs()
	var fns []any
	for _, s := range specs {
		fns = append(fns, map[string]any{"type": "function", "function": map[string]any{"name": s.Name, "description": s.Description, "parameters": s.Parameters}})
	}
	fixed := toks(openai.DefaultSystemPrompt) + 4 + toks(canon(fns))
	byExt := map[string]*sums{}
	var all sums
	var devs []float64
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "tokencount" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 || len(data) > 128<<10 || bytes.IndexByte(data, 0) >= 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		args := canon(map[string]any{"path": rel})
		out := canon(map[string]any{"path": rel, "content": string(data), "size": len(data)})
		msgs := []model.Message{
			{ID: "msg-01a23800-0000-7000-8000-000000000001", Role: model.RoleUser, Content: "What does " + rel + " do?"},
			{ID: "msg-01a23800-0000-7000-8000-000000000002", Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_0", Name: "fs.read", Arguments: json.RawMessage(args)}}},
			{ID: "msg-01a23800-0000-7000-8000-000000000003", Role: model.RoleTool, Content: out, ToolCallID: "call_0", Name: "fs.read"},
		}
		b := compaction.Occupancy(openai.DefaultSystemPrompt, specs, msgs)
		m := compaction.NewMeter(openai.DefaultSystemPrompt, specs)
		for _, msg := range msgs {
			m.Add(msg)
		}
		est := m.Estimate()
		t := fixed + 4 + toks(msgs[0].Content) + 4 + toks("fs_read"+args) + 4 + toks(out) + 3
		ext := filepath.Ext(p)
		if ext == "" {
			ext = "(none)"
		}
		if byExt[ext] == nil {
			byExt[ext] = &sums{}
		}
		byExt[ext].add(b, est, t)
		all.add(b, est, t)
		devs = append(devs, 100*(float64(est)/float64(t)-1))
		return nil
	})
	exts := make([]string, 0, len(byExt))
	for e, s := range byExt {
		if s.n >= 3 {
			exts = append(exts, e)
		}
	}
	sort.Strings(exts)
	for _, e := range exts {
		s := byExt[e]
		fmt.Printf("| this repository, %s files, %s | %d | %d | %s | %s |\n", e, name, s.n, s.tokens, dev(s.bytes, s.tokens), dev(s.est, s.tokens))
	}
	fmt.Printf("| this repository, all files, %s | %d | %d | %s | %s |\n", name, all.n, all.tokens, dev(all.bytes, all.tokens), dev(all.est, all.tokens))
	sort.Float64s(devs)
	q := func(f float64) float64 { return devs[int(f*float64(len(devs)-1))] }
	fmt.Printf("| … per request, %s: 5th / 50th / 95th percentile | | | | %+.0f %% / %+.0f %% / %+.0f %% |\n", name, q(0.05), q(0.5), q(0.95))
}

// streams compares each recorded response's streamed text (content,
// reasoning, tool-call names and arguments) with its reported completion
// tokens, for responses of at least 200 tokens that show at least a byte
// per token counted (the others count mostly what the stream does not
// show: hidden reasoning, call framing).
func streams(dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.sse"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var text strings.Builder
		var last *usage
		section := ""
		flush := func() {
			enc := canon(text.String())
			b := len(enc)
			if section != "" && last != nil && last.tokens() >= 200 && b >= last.tokens() {
				t := last.tokens()
				fmt.Printf("| stream %s, %s (completion) | 1 | %d | %s | %s |\n", filepath.Base(p), section, t, dev(b, t), dev(compaction.MixTokens([]byte(enc)), t))
			}
			text.Reset()
			last = nil
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if s, ok := strings.CutPrefix(l, "#=== "); ok {
				flush()
				section = s
				if strings.HasPrefix(s, "reject") {
					section = ""
				}
				continue
			}
			payload, ok := strings.CutPrefix(l, "data: ")
			if !ok || payload == "[DONE]" {
				continue
			}
			var c chunk
			if json.Unmarshal([]byte(payload), &c) != nil {
				continue
			}
			for _, ch := range c.Choices {
				for _, s := range []*string{ch.Delta.Content, ch.Delta.ReasoningContent, ch.Delta.Reasoning} {
					if s != nil {
						text.WriteString(*s)
					}
				}
				for _, tc := range ch.Delta.ToolCalls {
					text.WriteString(tc.Function.Name + tc.Function.Arguments)
				}
			}
			switch {
			case c.Usage != nil:
				last = c.Usage
			case c.XGroq != nil && c.XGroq.Usage != nil:
				last = c.XGroq.Usage
			}
		}
		flush()
	}
}

type usage struct {
	Completion int `json:"completion_tokens"`
	Details    *struct {
		Reasoning int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	Total  int `json:"total_tokens"`
	Prompt int `json:"prompt_tokens"`
}

// tokens is the completion tokens, reasoning included where the server
// counts it apart (total above prompt + completion).
func (u *usage) tokens() int {
	if u.Details != nil && u.Total > u.Prompt+u.Completion {
		return u.Completion + u.Details.Reasoning
	}
	return u.Completion
}

type chunk struct {
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			ToolCalls        []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
	XGroq *struct {
		Usage *usage `json:"usage"`
	} `json:"x_groq"`
}
