//go:build race

package handlers

// raceEnabled: the suite runs under the race detector, where checking the
// recorded exchanges against the OpenAPI document again adds minutes and
// finds nothing the plain run did not.
const raceEnabled = true
