package healthcheck

import (
	"context"
	"time"
)

// publishLoop publishes a heartbeat with what changed (Follower) on a
// fixed cadence and soon after a state change, until ctx ends. One write
// per cadence whatever the number of probes, and its size is what
// changed, not the number of origins.
func (c *Checker) publishLoop(ctx context.Context) {
	if c.opts.Publisher == nil {
		<-ctx.Done()
		return
	}
	f := c.Follow()
	timer := time.NewTimer(c.PublishEvery())
	defer timer.Stop()
	var last time.Time
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-c.kick:
			if wait := minPublishGap - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
		last = time.Now()
		err := c.publish(ctx, f)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			c.m.publications.WithLabelValues("failure").Inc()
			// Once per outage, not once per cadence.
			if !failing {
				c.log.Warn("publish health view", "err", err)
			}
			failing = true
		default:
			c.m.publications.WithLabelValues("success").Inc()
			if failing {
				c.log.Info("publish health view recovered")
			}
			failing = false
		}
		timer.Reset(c.PublishEvery())
	}
}

// publish delivers f's next update; one that fails is folded into the
// next (the Follower sends again what was not committed).
func (c *Checker) publish(ctx context.Context, f *Follower) error {
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	u, commit := f.Next(time.Now())
	if err := c.opts.Publisher.PublishHealth(ctx, u); err != nil {
		return err
	}
	commit()
	return nil
}

// PublishEvery is the cadence: the option, else the shortest monitor
// interval within [1s, 10s] (in monitor seconds, which tests shrink).
func (c *Checker) PublishEvery() time.Duration {
	if c.opts.PublishInterval > 0 {
		return c.opts.PublishInterval
	}
	c.mu.Lock()
	d := c.minInterval
	c.mu.Unlock()
	if d == 0 {
		d = 10 * c.unit
	}
	return min(max(d, c.unit), 10*c.unit)
}
