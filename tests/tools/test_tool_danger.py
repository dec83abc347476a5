"""The deny-list of destructive commands: normalised variants caught, look-alikes let through."""

from __future__ import annotations

import pytest

from agentd.tools.shellparse.danger import dangerous_reason
from agentd.tools.shellparse.words import segments, strip_wrappers

DANGEROUS = [
    "rm -rf /",
    "rm -fr /",
    "rm -r -f /",
    "rm  --recursive --force /",
    "rm --force --recursive /",
    "sudo rm -rf /",
    "sudo -u root rm -rf /",
    "/bin/rm -rf /",
    "rm -rf /*",
    "rm -rf ~",
    "rm -rf ~/",
    "rm -rf $HOME",
    "rm -rf ${HOME}/*",
    'rm -rf "$HOME"',
    "rm -Rf /usr",
    "rm -rf -- /",
    "rm --no-preserve-root -rf /",
    "cd /tmp && rm -rf /",
    "echo hi\nrm -rf /",
    "true; rm -rf ~",
    "echo $(rm -rf /)",
    "echo `rm -rf /`",
    'bash -c "rm -rf /"',
    "sh -lc 'rm -rf ~'",
    "eval rm -rf /",
    "env FOO=1 nice -n 5 rm -rf /",
    "timeout 5 rm -rf /",
    ":(){ :|:& };:",
    ":() { : | : & } ; :",
    "bomb(){ bomb|bomb& };bomb",
    "mkfs.ext4 /dev/sdb1",
    "mkfs -t xfs /dev/nvme0n1",
    "wipefs -a /dev/sda",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "dd if=img of=/dev/nvme0n1",
    "echo garbage > /dev/sda",
    "cat x >/dev/sdb",
    "make && cat x > /dev/sda",  # the grammar redirects the whole list
    "chmod -R 777 /",
    "chmod --recursive 755 /",
    "chown -R me:me /",
    "chgrp -R staff ~",
    "find / -name '*.log' -delete",
    "git push --force",
    "git push -f origin main",
    "git push origin main --force-with-lease",
    "git push --force-with-lease=main origin",
    "git push origin +main",
    "git -C repo push -uf origin main",
    "shutdown -h now",
    "sudo reboot",
    "poweroff",
    "halt",
    "init 0",
    "systemctl reboot",
]

HARMLESS = [
    "rm -rf ./build",
    "rm -rf build/",
    "rm -rf /tmp/agentd-x/build",
    "rm -f /etc/hosts.bak",
    "rm /",
    "rm -rf node_modules dist",
    'echo "rm -rf /"',
    "grep -r 'rm -rf /' .",
    "ls /",
    "chmod -R 755 ./dist",
    "chmod 777 /tmp/x",
    "chown me /",
    "dd if=a.img of=b.img",
    "cat /dev/sda | head -c 10",
    "echo x > /dev/null",
    "git push origin main",
    "git push -u origin feature",
    "git log --force-something",
    "find . -name '*.pyc' -delete",
    "systemctl status nginx",
    "python shutdown.py",
    "echo reboot",
    "mkdir -p /tmp/x",
]


@pytest.mark.parametrize("command", DANGEROUS)
def test_caught(command: str) -> None:
    assert dangerous_reason(command) is not None


@pytest.mark.parametrize("command", HARMLESS)
def test_let_through(command: str) -> None:
    assert dangerous_reason(command) is None


def test_reason_is_readable() -> None:
    reason = dangerous_reason("rm -rf /")
    assert reason is not None
    assert "recursively deletes" in reason


def test_segments_split_lists_pipes_and_substitutions() -> None:
    assert segments("a x && b | c; d & e\nf $(g) `h`") == [
        ["a", "x"],
        ["b"],
        ["c"],
        ["d"],
        ["e"],
        ["f"],
        ["g"],
        ["h"],
    ]
    assert segments("echo 'a; b' \"c && d\"") == [["echo", "a; b", "c && d"]]


def test_unbalanced_quotes_fall_back_to_a_plain_split() -> None:
    assert segments("echo 'oops; rm -rf /") == [["echo", "'oops"], ["rm", "-rf", "/"]]
    assert dangerous_reason("echo 'oops; rm -rf /") is not None


def test_strip_wrappers() -> None:
    assert strip_wrappers(["sudo", "-u", "x", "env", "A=1", "nohup", "rm", "-r"]) == ["rm", "-r"]
    assert strip_wrappers(["FOO=1", "BAR=2"]) == []
