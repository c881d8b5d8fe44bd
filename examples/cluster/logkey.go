//go:build !js

package main

import (
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"
)

// maxLogKey is how much of a key the demo's logs show: a key comes from
// the query and may be kilobytes long, so a longer one is logged as its
// first maxLogKey bytes and its length.
const maxLogKey = 64

// clipKey returns key as the logs show it: whole if it has at most
// maxLogKey bytes, else its first maxLogKey bytes (cut at the start of a
// character), "…" and its length, as in "kkkk…(10240 bytes)".
func clipKey(key string) string {
	if len(key) <= maxLogKey {
		return key
	}
	cut := maxLogKey
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", key[:cut], len(key))
}

// logKey is a key in a log record (a slog.LogValuer): clipKey's form.
type logKey string

func (k logKey) LogValue() slog.Value { return slog.StringValue(clipKey(string(k))) }

// logKeys is the keys of a request in a log record, each clipped.
type logKeys []string

func (ks logKeys) LogValue() slog.Value {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = clipKey(k)
	}
	return slog.AnyValue(out)
}

// logErr is an error about key in a log record: its text, with key
// clipped where it names it (a cache.Error names the key, whole).
func logErr(err error, key string) slog.Value {
	if len(key) <= maxLogKey {
		return slog.AnyValue(err)
	}
	return slog.StringValue(strings.ReplaceAll(err.Error(), key, clipKey(key)))
}
