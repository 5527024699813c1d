package fspath

import (
	"strings"
	"unicode"
)

// fold maps each letter to its upper case, one character at a time, as
// NTFS's upcase table does (so "ß" stays "ß" and never becomes "SS").
func fold(p string) string { return strings.Map(unicode.ToUpper, p) }
