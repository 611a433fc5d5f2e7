// A JDBC CallableStatement with OUT and INOUT parameters, as applications
// call procedures through MariaDB Connector/J: the driver prepares the
// CALL on the server and reads the parameters' values from the result
// set the server flags SERVER_PS_OUT_PARAMS. It prints what it saw, one
// fact per line, for the Go test to compare.
// Arguments: host port.
import java.sql.*;

public class CallOutParams {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:mariadb://" + args[0] + ":" + args[1]
            + "/?user=root&useServerPrepStmts=true";
        try (Connection c = DriverManager.getConnection(url)) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE callout");
                s.execute("USE callout");
                s.execute("CREATE PROCEDURE scale(INOUT x BIGINT, IN k INT, OUT label VARCHAR(20), OUT at DATE) "
                    + "BEGIN SET x = x * k; SET label = CONCAT('times ', k); SET at = DATE('2024-03-05'); SELECT 'body' AS b; END");
            }
            try (CallableStatement cs = c.prepareCall("{call scale(?, ?, ?, ?)}")) {
                for (int k = 2; k <= 3; k++) {
                    cs.setLong(1, 7);
                    cs.registerOutParameter(1, Types.BIGINT);
                    cs.setInt(2, k);
                    cs.registerOutParameter(3, Types.VARCHAR);
                    cs.registerOutParameter(4, Types.DATE);
                    boolean rs = cs.execute();
                    String body = "";
                    if (rs) {
                        try (ResultSet r = cs.getResultSet()) {
                            while (r.next()) {
                                body += r.getString(1);
                            }
                        }
                    }
                    System.out.println("k " + k + " body " + body + " x " + cs.getLong(1)
                        + " label " + cs.getString(3) + " at " + cs.getDate(4));
                }
            }
        }
    }
}
