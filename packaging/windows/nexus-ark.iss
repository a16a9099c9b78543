; Inno Setup script for the Windows installer of Nexus Ark (Inno Setup 6).
;   iscc /DAppVersion=0.1.0 packaging\windows\nexus-ark.iss
; Packs the PyInstaller folder dist\nexus-ark (build.spec) into dist\nexus-ark-<version>-windows-x64-setup.exe:
; a per-user install by default (no administrator rights needed; the dialog offers all users), a Start menu
; entry, an optional desktop icon and an uninstaller (Settings > Apps, or the Start menu entry).
; Your data lives in %LOCALAPPDATA%\NexusArk, outside the install folder: upgrading and uninstalling keep it.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#define Root "..\.."

[Setup]
; The AppId ties upgrades and the uninstaller together: never change it.
AppId={{5B0E8D2A-6C1F-4E0B-9A57-2D3C4E5F6A7B}
AppName=Nexus Ark
AppVersion={#AppVersion}
AppVerName=Nexus Ark {#AppVersion}
AppPublisher=Nexus Ark
DefaultDirName={autopf}\Nexus Ark
DefaultGroupName=Nexus Ark
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#Root}\dist
OutputBaseFilename=nexus-ark-{#AppVersion}-windows-x64-setup
SetupIconFile={#Root}\assets\icons\app.ico
UninstallDisplayIcon={app}\nexus-ark.exe
UninstallDisplayName=Nexus Ark
LicenseFile={#Root}\nexus_ark\licenses\nexus-ark.txt
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
; A running copy holds files open: ask the person to close it (Restart Manager) before replacing files.
CloseApplications=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"
Name: "japanese"; MessagesFile: "compiler:Languages\Japanese.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; An upgrade replaces the whole app folder: files a newer build no longer has must not linger.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#Root}\dist\nexus-ark\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Nexus Ark"; Filename: "{app}\nexus-ark.exe"
Name: "{group}\{cm:UninstallProgram,Nexus Ark}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Nexus Ark"; Filename: "{app}\nexus-ark.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\nexus-ark.exe"; Description: "{cm:LaunchProgram,Nexus Ark}"; Flags: nowait postinstall skipifsilent
