package protocol

import (
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// Collation IDs a client may name in its handshake.
const (
	utf8mb4GeneralCI = 45
	latin1GeneralCI  = 48
	binaryCollation  = 63
)

const connectionCharset = "SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection"

// TestConnectionCollation checks that the collation a client names in its
// handshake, and SET NAMES ... COLLATE, set the connection's character
// sets and collation, as in MySQL.
func TestConnectionCollation(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		for id, want := range map[byte]string{
			utf8mb4GeneralCI: "[[utf8mb4 utf8mb4 utf8mb4 utf8mb4_general_ci]]",
			latin1GeneralCI:  "[[latin1 latin1 latin1 latin1_general_ci]]",
			binaryCollation:  "[[binary binary binary binary]]",
		} {
			c, _ := dialCollation(t, s, id)
			run(t, c, []step{{sql: connectionCharset, want: []uint16{ac}, rows: want}})
		}

		c, _ := dialCollation(t, s, utf8mb4GeneralCI)
		utf8mb4Default := "utf8mb4_0900_ai_ci"
		if s.Flavor == testserver.MariaDB {
			utf8mb4Default = "utf8mb4_general_ci"
		}
		run(t, c, []step{
			{sql: "SET NAMES latin1 COLLATE latin1_general_ci", want: []uint16{ac}},
			{sql: connectionCharset, want: []uint16{ac}, rows: "[[latin1 latin1 latin1 latin1_general_ci]]"},
			{sql: "SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin'", want: []uint16{ac}},
			{sql: "SELECT @@collation_connection, 'a' = 'A'", want: []uint16{ac}, rows: "[[utf8mb4_bin 0]]"},
			{sql: "SET NAMES utf8mb4", want: []uint16{ac}},
			{sql: "SELECT @@collation_connection, 'a' = 'A'", want: []uint16{ac}, rows: "[[" + utf8mb4Default + " 1]]"},
			{sql: "SET NAMES utf8mb4 COLLATE utf8mb4_bin; SELECT 'a' = 'A'", want: []uint16{ac | more, ac}, rows: "[[0]]"},
			{sql: "SET NAMES utf8mb4 COLLATE latin1_swedish_ci", err: 1253},
			{sql: "SET NAMES utf8mb4 COLLATE no_such_collation", err: 1273},
			{sql: "SET NAMES no_such_charset COLLATE utf8mb4_bin", err: 1115},
			{sql: "SELECT @@collation_connection", want: []uint16{ac}, rows: "[[utf8mb4_bin]]"},
		})
	})
}
