// Package notify tells integrations what happened: it turns the agreed
// health a node observes into state changes the store records once
// (Observer), and delivers the store's outbox of events to the
// subscriptions' URLs, signed, in order, with retries (Worker).
//
// The events themselves are written by the stores, in the transaction of
// the change that causes them (pools.NotifyStore); nothing here decides
// what is recorded twice: the store keeps one event per transition
// however many nodes report it, and one node at a time delivers it.
package notify
