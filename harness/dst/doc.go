// Package dst is the deterministic simulation of the operation lifecycle:
// the real engine (its dispatch, tick, notification and abandon paths, one
// or two instances at once, restarted now and then) on the memory store
// and the Clusters Service simulator behind the real ocm client, with the
// project's frontend making requests and fault windows between every
// party, all in one synctest bubble: time is the bubble's, everything
// random is drawn from one seed, and every call to a dependency waits at
// a gate until the scheduler lets it go, one at a time, in an order drawn
// from the seed. So a seed replays its run event for event.
//
// An oracle that reads what CS truly holds (simulator.Truth) judges every
// terminal write as it lands and the run as a whole at its end: a delete
// Succeeded only when CS holds no such object; a create only when CS's
// object of this resource was ready; an update when CS showed what was
// asked; Failed only on CS's own error, refusal or failed upgrade, a
// deadline while CS was not working on the object, or an operator;
// Canceled only by the documented rules; every operation ended or
// reported stuck once the faults heal, ARM told once, no document lost,
// no CS object left without its resource. docs/testing.md says how to run
// and replay it.
package dst
