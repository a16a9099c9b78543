"""Voice: the persona speaks (text to speech) and listens (speech to text), offline first (issue 36).

The shapes every engine, the audio devices, the app's voice part and the window share are in base.py.
"""
