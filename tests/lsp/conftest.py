import sys


def server_command():
    return [sys.executable, "-m", "gradaudit.server"]
