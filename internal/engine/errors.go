package engine

// Error replies that clients branch on, with Redis's exact text. Defined
// once; handlers use these rather than spelling the text again.
const (
	ErrSyntax        = "ERR syntax error"
	ErrWrongType     = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrNotInt        = "ERR value is not an integer or out of range"
	ErrNotFloat      = "ERR value is not a valid float"
	ErrOverflow      = "ERR increment or decrement would overflow"
	ErrNoKey         = "ERR no such key"
	ErrDBIndex       = "ERR DB index is out of range"
	ErrSameObject    = "ERR source and destination objects are the same"
	ErrNoAuth        = "NOAUTH Authentication required."
	ErrWrongPass     = "WRONGPASS invalid username-password pair or user is disabled."
	ErrAuthNoPass    = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	ErrInvalidExpire = "ERR invalid expire time in '%s' command"
	ErrStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrNaNOrInf      = "ERR increment would produce NaN or Infinity"
	ErrTimeout       = "ERR timeout is not a float or out of range"
	ErrTimeoutNeg    = "ERR timeout is negative"
	ErrMaxClients    = "ERR max number of clients reached"
	ErrExecAbort     = "EXECABORT Transaction discarded because of previous errors."
	ErrNoScript      = "NOSCRIPT No matching script. Please use EVAL."
	ErrBusy          = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	ErrBusyFunction  = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	ErrNotBusy       = "NOTBUSY No scripts in execution right now."
	ErrUnkillable    = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	ErrPositive      = "ERR value is out of range, must be positive"
	ErrMultiNested   = "ERR MULTI calls can not be nested"
)
