package openai

import (
	"context"
	"errors"
	"io"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// Probe is what the server said when asked whether it can serve the
// configured model (harness doctor).
type Probe struct {
	Listed   bool     // GET /models answered with a list
	Models   []string // the ids it lists
	Found    bool     // the model is listed, or answered a one-token request
	Answered bool     // a one-token request was answered
	Window   Window   // the window the server states for the model (Client.Window), Tokens 0 for none
}

// Probe asks GET /models whether the server serves the configured model;
// when the list is not served (404, 405, not a list) or does not name the
// model, it sends a one-token request instead. One attempt each, no
// retries. An error means the server could not be reached or refused the
// key, with the codes of Models and Stream (MODEL_TRANSPORT_ERROR naming
// the URL and the cause, MODEL_AUTH_ERROR, MODEL_HTTP_ERROR, …); a
// reachable server that does not serve the model is Found == false.
func (c *Client) Probe(ctx context.Context) (Probe, error) {
	var p Probe
	list, err := c.Models(ctx)
	switch code := errcode.Of(err); {
	case err == nil:
		p.Listed = true
		for _, m := range list {
			p.Models = append(p.Models, m.ID)
		}
		if m, ok := FindModel(list, c.model); ok {
			p.Found, p.Window = true, c.windowOf(ctx, m)
			return p, nil
		}
	case code == errcode.ModelInvalidResponse || code == errcode.ModelHTTPError:
		// No model list here (a 5xx shows again below): ask the model.
	default:
		return p, err
	}
	one := *c
	one.maxRetries = 0
	s, err := one.Stream(ctx, model.Request{RequestID: "req-doctor", Model: c.model,
		Messages: []model.Message{{Role: model.RoleUser, Content: "Reply with one word: ok"}}, MaxTokens: 1})
	if err != nil {
		return p, err
	}
	defer s.Close()
	for {
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			p.Found, p.Answered = true, true
			return p, nil
		}
		if err != nil {
			if p.Listed && errcode.Of(err) == errcode.ModelHTTPError {
				return p, nil // listed without the model, and refused: not served
			}
			return p, err
		}
	}
}
