package rdb

// WriteHandmade lets the external tests regenerate testdata/handmade.
var WriteHandmade = writeHandmade
