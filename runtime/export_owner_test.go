package runtime

// Registry returns how many sessions the Runtime holds as open, how many
// runs as active and how many ended runs' outcomes it keeps.
func (rt *Runtime) Registry() (open, live, kept int) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return len(rt.sessions), len(rt.runs), len(rt.ended)
}
