//go:build race

package acp_test

const raceEnabled = true
