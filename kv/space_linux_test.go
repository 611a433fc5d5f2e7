package kv

import "syscall"

var errNoSpace error = syscall.ENOSPC
