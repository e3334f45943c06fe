"""The command names and options the built-in command judgement knows about."""

from __future__ import annotations

import re

from mycode_builtin_tools.permissions.wrappers import SHELLS

SEVERITY = {"allow": 0, "ask": 1, "deny": 2}
MAX_COMMAND_CHARS = 64_000
"""Longer command lines are not parsed at all: they ask (and are denied in ``-p``)."""
MAX_PARTS = 1_000
"""Likewise command lines of more commands than this (after parsing, which is linear)."""
FUNCTION_PARENS = re.compile(r"\([ \t]{0,16}\)[ \t]{0,16}\{")
"""``() {`` of a shell function definition; the name is read backwards from it."""
SUBST_DOWNLOAD = re.compile(r"(\$\(|<\(|`)\s*(curl|wget|fetch)\b")
LOCAL_URL = re.compile(
    r"^(https?://)?(localhost|127(\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)(:\d+)?([/?#].*)?$"
)
DISK_TOOLS = {
    "mke2fs",
    "mkswap",
    "wipefs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "parted",
    "gdisk",
    "sgdisk",
}
POWER = {"shutdown", "reboot", "halt", "poweroff"}
DOWNLOADERS = {"curl", "wget", "fetch", "aria2c", "http", "https", "xh"}
INTERPRETERS = SHELLS | {"python", "python3", "perl", "ruby", "node", "php", "eval", "source", "."}
NETWORK = DOWNLOADERS | {
    "ssh", "scp", "sftp", "nc", "ncat", "netcat", "telnet", "ftp", "socat", "ping", "mosh",
    "lynx", "w3m", "links", "rclone", "s3cmd", "gsutil",
}  # fmt: skip
EXTERNAL = {
    "docker", "podman", "kubectl", "helm", "terraform", "pulumi", "aws", "gcloud", "az",
    "heroku", "vercel", "netlify", "fly", "flyctl", "gh", "ansible", "ansible-playbook",
    "vagrant",
}  # fmt: skip
ADMIN = {
    "service", "launchctl", "crontab", "mount", "umount", "swapon", "swapoff", "iptables",
    "ip6tables", "nft", "ufw", "modprobe", "insmod", "rmmod", "useradd", "userdel", "usermod",
    "groupadd", "passwd", "chpasswd", "chsh", "visudo", "update-grub", "grub-install",
    "setenforce", "su",
}  # fmt: skip
PROCESS = {"kill", "pkill", "killall"}
DELETERS = {"rm", "rmdir", "unlink", "shred"}
ALL_ARG_WRITERS = {"touch", "mkdir", "tee", "truncate", "mv"}
DEST_WRITERS = {"cp", "install", "ln", "rsync"}
MODE_WRITERS = {"chmod", "chown", "chgrp"}
WRITE_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}
OPTION_VALUES = {
    "truncate": {"-s", "--size", "-r", "--reference"},
    "install": {"-m", "--mode", "-o", "--owner", "-g", "--group", "-t", "--target-directory"},
    "cp": {"-t", "--target-directory", "-S", "--suffix"},
    "mv": {"-t", "--target-directory", "-S", "--suffix"},
    "ln": {"-t", "--target-directory", "-S", "--suffix"},
    "mkdir": {"-m", "--mode"},
    "sed": {"-e", "--expression", "-f", "--file", "-l"},
    "tar": {"-f", "--file", "-C", "--directory", "-T", "-X"},
    "rsync": {"-e", "--rsh", "--exclude", "--include", "--filter"},
}
