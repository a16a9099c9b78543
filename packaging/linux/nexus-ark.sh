#!/bin/sh
# Installed by the nexus-ark .deb: the app lives in /opt/nexus-ark, your data in ~/.local/share/NexusArk.
exec /opt/nexus-ark/nexus-ark "$@"
