module github.com/geecache/geecache/scripts/apicount

go 1.26.0
