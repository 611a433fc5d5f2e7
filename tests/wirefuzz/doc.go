// Package wirefuzz fuzzes percdb's MySQL packet path: the bytes a client
// sends before and after logging in, down to framing, sequence ids,
// lengths and the binary parameters of prepared statements.
//
// Each target starts a percdb server in the test process (in memory, on a
// free port of 127.0.0.1) and, per input, opens a TCP connection with a
// small client of its own (package file wire.go: packet framing, the
// HandshakeResponse41 packet with the mysql_native_password proof, text
// queries, COM_STMT_PREPARE), because a driver would refuse to send most
// of what the targets send:
//
//   - FuzzHandshake sends the input instead of the handshake response;
//   - FuzzCommand logs in, then sends the input as the next command;
//   - FuzzStmt logs in, prepares a statement with four parameters and
//     sends a statement command (COM_STMT_EXECUTE, SEND_LONG_DATA, RESET,
//     CLOSE, FETCH or any byte) with the input as its body.
//
// The input goes either as raw bytes (any framing) or as one well-framed
// packet. Then the client half-closes the connection and the property is
// checked:
//
//  1. the server answers (error packets are fine) and closes the
//     connection within a generous bound (ioTimeout): no hang;
//  2. whatever it sent before closing is whole packets;
//  3. it did not panic: no error packet says "panic" (go-mysql-server
//     turns panics in query execution into errors) and vitess' listener,
//     which recovers a panic in a connection and logs "mysql_server caught
//     panic" on the standard logger, logged none, unless the panic is a
//     known finding (known_test.go), which is logged instead;
//  4. a fresh connection still logs in and runs SELECT 1.
//
// A panic that escapes both (in another goroutine) kills the test process,
// which go test -fuzz reports with the input.
//
// The seed corpus is in testdata/fuzz/<target>; plain go test runs it.
// seeds_test.go lists the seeds and TestSeedCorpus keeps the files in step
// (PERCDB_WIREFUZZ_WRITE_SEEDS=1 rewrites them). Long runs:
//
//	go test ./tests/wirefuzz -run '^$' -fuzz '^FuzzCommand$' -fuzztime 1h
package wirefuzz
