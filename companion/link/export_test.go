package link

import "time"

// WithWriteTimeout sets how long a write may make no progress before it
// fails with ErrStalled (DefaultWriteTimeout in production), so that tests
// of a stalled peer finish quickly.
func WithWriteTimeout(d time.Duration) Option { return func(c *Conn) { c.writeTimeout = d } }
