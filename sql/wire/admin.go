package wire

import "github.com/dolthub/vitess/go/mysql"

// The administrative commands vitess does not implement (it answers 1047
// "command handling not implemented yet"), which mariadb-admin and the
// mysql client send:
//
//   - COM_STATISTICS (0x09): its answer is one packet of text, no OK or
//     error header ("Uptime: 12  Threads: 1  Questions: 40 ..."), the
//     `status` line of mariadb-admin and of the client's \s. percdb
//     writes it from Config.Statistics.
//   - COM_REFRESH (0x07) with its one byte of REFRESH_* flags
//     (mariadb-admin refresh and flush-*, mariadb-dump --flush-logs on
//     older clients): the FLUSH statement of the same meaning, given to
//     vitess as a COM_QUERY, so that the handler runs it and its OK
//     packet carries the session's status flags.
//   - COM_DEBUG (0x0D): MySQL writes debugging information to its error
//     log and answers OK; percdb has none to write and answers OK the
//     same way (a COM_QUERY of DO 0).
const (
	comRefresh    = 0x07
	comStatistics = 0x09
	comDebug      = 0x0d
)

// REFRESH_* flags of COM_REFRESH (MySQL's mysql_com.h).
const (
	refreshGrant  = 0x01
	refreshLog    = 0x02
	refreshTables = 0x04
	refreshHosts  = 0x08
	refreshStatus = 0x10
)

// refreshStatement returns the one statement COM_REFRESH with flags
// means for percdb. vitess's grammar takes one FLUSH option a statement,
// not MySQL's list, and one statement does it all: of the options,
// percdb acts on PRIVILEGES (the grants) and STATUS (as FLUSH STATUS
// does); LOGS, TABLES and HOSTS act on nothing (percdb keeps no binary
// log, table cache or host cache, and reopens a slow log that was moved
// by itself), THREADS, SLAVE and MASTER likewise. A FLUSH STATUS that
// fails fails the command, as in MySQL; with no flag that acts the
// answer is OK (DO 0).
func refreshStatement(flags byte) string {
	switch {
	case flags&refreshStatus != 0:
		return "FLUSH STATUS"
	case flags&refreshGrant != 0:
		return "FLUSH PRIVILEGES"
	case flags&refreshLog != 0:
		return "FLUSH LOGS"
	case flags&refreshTables != 0:
		return "FLUSH TABLES"
	case flags&refreshHosts != 0:
		return "FLUSH HOSTS"
	}
	return "DO 0"
}

// adminCommand reads a COM_REFRESH, COM_DEBUG or COM_STATISTICS (cmd,
// one packet) and answers it or hands vitess the statement it means.
func (c *Conn) adminCommand(cmd byte) error {
	_, payload, seq, err := c.readCommand()
	if err != nil {
		return err
	}
	switch cmd {
	case comStatistics:
		c.atCommand = true
		stats := "Uptime: 0"
		if c.cfg.Statistics != nil {
			stats = c.cfg.Statistics()
		}
		_, err := c.transport.Write(appendPacket(nil, seq+1, []byte(stats)))
		return err
	case comRefresh:
		var flags byte
		if len(payload) > 1 {
			flags = payload[1]
		}
		c.pending = appendPacket(nil, seq, append([]byte{mysql.ComQuery}, refreshStatement(flags)...))
	default: // comDebug
		c.pending = appendPacket(nil, seq, append([]byte{mysql.ComQuery}, "DO 0"...))
	}
	return nil
}
