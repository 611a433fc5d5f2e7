// A JDBC program as applications are written, for MariaDB Connector/J
// with server-side prepared statements: DDL, batched inserts through a
// prepared statement, reads by parameter, a transaction rolled back and
// one committed with autocommit off, autocommit on again, and the types
// drivers decode (DECIMAL, DATE, DATETIME, TIME, zero dates, NULL), over
// TLS. It prints what it saw, one fact per line, for the Go test to
// compare.
// Arguments: host port.
import java.sql.*;

public class DriverSmoke {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:mariadb://" + args[0] + ":" + args[1]
            + "/?user=root&useServerPrepStmts=true";
        // The application's connection uses TLS, with the certificate
        // percdb generated at its first start (not verified): with
        // useSsl=true Connector/J fails to connect to a server without
        // TLS.
        try (Connection admin = DriverManager.getConnection(url);
             Connection c = DriverManager.getConnection(url + "&useSsl=true&trustServerCertificate=true")) {
            System.out.println("connected with TLS");
            try (Statement s = admin.createStatement()) {
                s.execute("CREATE DATABASE jdbc");
                s.execute("CREATE TABLE jdbc.acct (id INT PRIMARY KEY, owner VARCHAR(20), bal DECIMAL(10,2), opened DATE, seen DATETIME, t TIME)");
            }
            c.setCatalog("jdbc");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO acct VALUES (?, ?, ?, ?, ?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    p.setInt(1, i);
                    p.setString(2, "owner " + i);
                    p.setBigDecimal(3, new java.math.BigDecimal(i * 100 + ".25"));
                    p.setDate(4, Date.valueOf("2024-0" + i + "-15"));
                    p.setTimestamp(5, Timestamp.valueOf("2024-0" + i + "-15 10:20:30"));
                    p.setTime(6, Time.valueOf("0" + i + ":30:00"));
                    p.addBatch();
                }
                System.out.println("batch " + java.util.Arrays.toString(p.executeBatch()));
            }
            try (PreparedStatement p = c.prepareStatement("SELECT owner, bal, opened, seen, t FROM acct WHERE id = ?")) {
                for (int id = 1; id <= 2; id++) {
                    p.setInt(1, id);
                    try (ResultSet r = p.executeQuery()) {
                        while (r.next()) {
                            System.out.println("row " + r.getString(1) + " " + r.getBigDecimal(2) + " " + r.getDate(3)
                                + " " + r.getTimestamp(4) + " " + r.getTime(5));
                        }
                    }
                }
            }

            c.setAutoCommit(false);
            try (PreparedStatement p = c.prepareStatement("UPDATE acct SET bal = bal + ? WHERE id = ?")) {
                p.setInt(1, -50); p.setInt(2, 1); p.executeUpdate();
                p.setInt(1, 50); p.setInt(2, 2); p.executeUpdate();
                System.out.println("in transaction, others see " + balances(admin));
                c.rollback();
                System.out.println("after rollback " + balances(admin));
                p.setInt(1, -70); p.setInt(2, 1); p.executeUpdate();
                p.setInt(1, 70); p.setInt(2, 2); p.executeUpdate();
                c.commit();
                System.out.println("after commit " + balances(admin));
            }
            c.setAutoCommit(true);
            try (PreparedStatement p = c.prepareStatement("DELETE FROM acct WHERE id = ?")) {
                p.setInt(1, 3);
                System.out.println("deleted " + p.executeUpdate());
            }
            System.out.println("autocommit on " + balances(admin));

            try (Statement s = c.createStatement()) {
                s.execute("SET SESSION sql_mode = ''");
                s.execute("INSERT INTO acct VALUES (9, NULL, NULL, '0000-00-00', '0000-00-00 00:00:00', NULL)");
            }
            try (PreparedStatement p = c.prepareStatement("SELECT owner, bal, opened, seen, t FROM acct WHERE id = ?")) {
                p.setInt(1, 9);
                try (ResultSet r = p.executeQuery()) {
                    r.next();
                    System.out.println("zero dates " + r.getString(1) + " " + r.getBigDecimal(2) + " " + r.getString(3)
                        + " " + r.getString(4) + " " + r.getString(5));
                }
            }
        }
    }

    static String balances(Connection admin) throws SQLException {
        StringBuilder b = new StringBuilder();
        try (Statement s = admin.createStatement();
             ResultSet r = s.executeQuery("SELECT bal FROM jdbc.acct ORDER BY id")) {
            while (r.next()) {
                b.append(b.length() == 0 ? "" : ",").append(r.getBigDecimal(1));
            }
        }
        return "[" + b + "]";
    }
}
