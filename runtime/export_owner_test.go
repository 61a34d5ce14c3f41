package runtime

// Registry returns how many runs the Runtime holds as active and how many
// ended runs' outcomes it keeps.
func (rt *Runtime) Registry() (live, kept int) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return len(rt.runs), len(rt.ended)
}
