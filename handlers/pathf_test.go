package handlers

import "fmt"

func pathf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
