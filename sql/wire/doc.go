// Package wire owns the bytes of a MySQL client connection beneath vitess's
// protocol layer (github.com/dolthub/vitess/go/mysql), for the commands
// vitess reads wrongly before any handler method runs:
//
//   - a COM_STMT_EXECUTE of a statement with 65,529 to 65,535 parameters:
//     vitess sizes its NULL bitmap as (count+7)/8 in 16 bits, which wraps
//     to 0, indexes past it and drops the connection. Conn decodes such an
//     execute itself (execute.go) and hands vitess the values as bound
//     variables, with the packet's new-parameters flag cleared so that
//     vitess reads none of it;
//   - a COM_STMT_PREPARE whose text vitess's grammar cannot parse (DO):
//     Config.RewritePrepare may give vitess another text, and the handler
//     learns the original from Conn.RewrittenPrepare; and vitess's answer
//     to one that does not parse, 1105, which becomes MySQL's 1064;
//   - a packet longer than max_allowed_packet (Config.MaxPacket), which
//     MySQL refuses with 1153 and vitess read;
//   - a COM_STMT_EXECUTE with a DATETIME, TIMESTAMP, DATE or TIME
//     parameter, which vitess writes as text without leading zeros (5 µs
//     as ".5", half a second; a zero date as " "): Conn decodes such an
//     execute itself, as above, and writes the values as MySQL does;
//     every execute of a statement with parameters is walked first, and
//     one whose values run past the packet (vitess panics on a length of
//     2^63 or more) is answered with 1835;
//   - commands vitess reads past their ends or goes on with after an
//     error, panicking and dropping the connection with no answer
//     (commands.go): an empty packet (1047), a COM_STMT_RESET of no
//     prepared statement (1243), a replica's COM_BINLOG_DUMP_GTID or
//     COM_REGISTER_REPLICA whose names run past the packet (1835), and a
//     handshake response shorter than its fixed part or with an auth
//     length of 2^63 or more (1043);
//   - the administrative commands vitess does not implement (1047)
//     (admin.go): COM_STATISTICS is answered with Config.Statistics'
//     line, COM_REFRESH and COM_DEBUG reach vitess as the statement they
//     mean (a FLUSH, DO 0), so that their OK packets carry the session's
//     status flags;
//
// It also writes what vitess cannot: the result sets of a CALL's
// SELECTs (results.go, TextResultSet), which vitess, writing one result
// set per statement, has no way to send. The handler hands them to
// Conn.WriteBeforeAnswer before vitess answers the CALL, and Conn then
// renumbers the packets of vitess's answer to follow them.
//
// To read the client's commands Conn must see them in clear, so it also
// terminates TLS, which MySQL negotiates in the middle of the handshake:
// the server's greeting announces CLIENT_SSL, the client answers with a
// short SSL request, and both then speak TLS on the same socket. Conn adds
// CLIENT_SSL to the greeting vitess writes (vitess is given no TLS
// configuration), takes the SSL request out of the stream, runs the TLS
// handshake with Config.TLS, and numbers the later handshake packets as
// vitess expects them (one less from the client, one more to it) until the
// login's OK or error packet. vitess then sees a plain connection: whoever
// needs to know that the client used TLS asks Conn (ConnectionState,
// Secure).
//
// Everything else passes through unchanged, one packet per Read, so that a
// packet is looked at only after vitess has answered the commands before
// it (an execute needs the parameter count its prepare set).
//
// Byte layouts are MySQL's client/server protocol ("Connection Phase",
// "COM_STMT_EXECUTE", "Binary Protocol Value" in the MySQL source
// documentation); every packet is a 3-byte little-endian payload length,
// a sequence number and the payload.
package wire
