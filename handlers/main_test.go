package handlers

import (
	"os"
	"testing"
)

// TestMain runs the tests, then checks every request and answer they
// exchanged through testEnv.do against the OpenAPI document.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && !raceEnabled && !checkExchanges(os.Stderr) {
		code = 1
	}
	os.Exit(code)
}
