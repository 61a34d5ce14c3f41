package gcpolicy

// Stop ends the follower Apply started; the limit then stays.
func Stop() { chain.Add(1) }
