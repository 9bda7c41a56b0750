#!/usr/bin/env python3
"""Writes a conversational eval set as a chat app would send it: each turn's title empty and its text without the
leading "Speaker: " (the speaker stays in metadata); each line keeps "doc", which names it in the questions' golds.

Usage: locomo_as_chat.py SOURCE_DIR TARGET_DIR
"""
import json
import shutil
import sys
from pathlib import Path

source, target = Path(sys.argv[1]), Path(sys.argv[2])
target.mkdir(parents=True, exist_ok=True)
with open(source / "corpus.jsonl") as f, open(target / "corpus.jsonl", "w") as out:
    for line in f:
        if not line.strip():
            continue
        d = json.loads(line)
        d.setdefault("doc", d.get("title", "") + "\n" + d["text"])
        speaker = d.get("metadata", {}).get("speaker")
        if speaker and d["text"].startswith(speaker + ": "):
            d["text"] = d["text"][len(speaker) + 2:]
        d["title"] = ""
        out.write(json.dumps(d) + "\n")
shutil.copy(source / "questions.jsonl", target / "questions.jsonl")
