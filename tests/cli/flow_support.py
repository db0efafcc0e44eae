"""What the CLI flow scripts (transfer_flow.py, lr_find_flow.py) share: running netsmith-cli
and reading the test figure it prints. A failure ends the script with the flow's name."""
import re
import subprocess
import sys


def run(flow, cmd):
    """Runs `cmd`; its output (stdout and stderr), or exit naming `flow` when it fails."""
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit("%s: %s failed (%d):\n%s" % (flow, " ".join(cmd), done.returncode,
                                              done.stdout[-3000:]))
    return done.stdout


def printed_test_accuracy(flow, output):
    """(percent, images) of the last line `train` prints."""
    m = re.search(r"test accuracy ([0-9.]+)% on (\d+) images", output)
    if not m:
        sys.exit("%s: no test accuracy in:\n%s" % (flow, output[-2000:]))
    return float(m.group(1)), int(m.group(2))
