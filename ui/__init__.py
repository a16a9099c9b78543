"""The Qt window. Imports nexus_ark; nexus_ark never imports this package."""
