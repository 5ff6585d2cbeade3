"""Relay stdio to a child process and record every byte it writes to stdout.

    python stdout_tap.py LOG PIDFILE -- CMD ARGS...

The SDK's stdio client parses the server's stdout and may drop what does not parse; putting
this shim between them lets a load run count the raw lines (and spot any that are not
JSON-RPC) while the real SDK client drives the real server. PIDFILE gets the server's pid,
so RSS is read from the server, not from this relay.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading


def main() -> int:
    log_path, pid_path, sep, *cmd = sys.argv[1:]
    assert sep == "--" and cmd, "usage: stdout_tap.py LOG PIDFILE -- CMD..."
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    with open(pid_path, "w") as fh:
        fh.write(str(child.pid))
    assert child.stdin is not None and child.stdout is not None

    def pump_in() -> None:
        assert child.stdin is not None
        try:
            for line in sys.stdin.buffer:
                child.stdin.write(line)
                child.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        finally:
            with contextlib.suppress(OSError):
                child.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    out = sys.stdout.buffer
    with open(log_path, "wb") as log:
        for line in child.stdout:
            log.write(line)
            log.flush()
            try:
                out.write(line)
                out.flush()
            except (BrokenPipeError, OSError):
                break
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
