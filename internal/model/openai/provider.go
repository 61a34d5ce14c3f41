package openai

// Provider identifies the server this client sends to: its base URL, which
// holds no credentials (New refuses them). The runtime keys its token
// calibration on it and the model name, so the same model name behind
// another server starts afresh.
func (c *Client) Provider() string { return c.base.String() }
