package protocol

import (
	"strconv"
	"strings"
)

// maxLogString bounds what a log line or error body repeats of a string that
// a caller sent (a path, a group, a key, a method), so that a request with
// a huge path cannot make a huge log line.
const maxLogString = 128

// clip returns s quoted, cut to maxLogString bytes with the number of bytes
// left out.
func clip(s string) string {
	if len(s) <= maxLogString {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:maxLogString]) + "…(" + strconv.Itoa(len(s)-maxLogString) + " more bytes)"
}

// maxLogError bounds what a log line repeats of an error's text (a source's
// message may quote the key it was asked for).
const maxLogError = 4 * maxLogString

// cutLog returns s cut to maxLogError bytes with the number of bytes left
// out.
func cutLog(s string) string {
	if len(s) <= maxLogError {
		return s
	}
	return strings.ToValidUTF8(s[:maxLogError], "") + "…(" + strconv.Itoa(len(s)-maxLogError) + " more bytes)"
}
