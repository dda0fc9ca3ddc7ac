# Install Gatewatch for this user on Windows, or upgrade it in place when run again:
# its own venv in %LOCALAPPDATA%\gatewatch, a gatewatch.cmd shim in %USERPROFILE%\.local\bin,
# a Start-menu shortcut, start at login (a shortcut in the Startup folder), then the tray app.
#   powershell -ExecutionPolicy Bypass -File installer\windows\install.ps1 [-NoLaunch]
param([switch]$NoLaunch)
$ErrorActionPreference = "Stop"

$Repo = (Resolve-Path (Join-Path $PSScriptRoot "..\..")).Path
# platformdirs' user_data_dir("gatewatch", appauthor=False) on Windows.
$Data = Join-Path $env:LOCALAPPDATA "gatewatch"
$Venv = Join-Path $Data "venv"
$VenvPython = Join-Path $Venv "Scripts\python.exe"
$Gatewatch = Join-Path $Venv "Scripts\gatewatch.exe"
$GatewatchW = Join-Path $Venv "Scripts\pythonw.exe"
$BinDir = Join-Path $env:USERPROFILE ".local\bin"
$Programs = [Environment]::GetFolderPath("Programs")
$Startup = [Environment]::GetFolderPath("Startup")

function Say($Text) { Write-Host "gatewatch: $Text" }

# The Python launcher picks the newest installed Python; fall back to python on PATH.
$Python = $null
foreach ($candidate in @(@("py", "-3"), @("python"))) {
    if (Get-Command $candidate[0] -ErrorAction SilentlyContinue) { $Python = $candidate; break }
}
if (-not $Python) { throw "Python 3.11 or newer is needed: install it from the Microsoft Store or python.org" }
$PyExe = $Python[0]; $PyArgs = @($Python | Select-Object -Skip 1)
& $PyExe @PyArgs -c "import sys; sys.exit(sys.version_info < (3, 11))"
if ($LASTEXITCODE -ne 0) { throw "Gatewatch needs Python 3.11 or newer" }

$Reuse = $false
if (Test-Path $VenvPython) {
    & $VenvPython -c "import sys; sys.exit(sys.version_info < (3, 11))"
    $Reuse = ($LASTEXITCODE -eq 0)
}
if ($Reuse) {
    Say "upgrading Gatewatch in $Venv"
} else {
    if (Test-Path $Venv) { Remove-Item -Recurse -Force $Venv }
    New-Item -ItemType Directory -Force -Path $Data | Out-Null
    Say "creating $Venv"
    & $PyExe @PyArgs -m venv $Venv
    if ($LASTEXITCODE -ne 0) { throw "could not create $Venv" }
}

# A running tray app holds files in the venv open: pip fails until it is quit.
& $VenvPython -m pip install --disable-pip-version-check --quiet --upgrade $Repo
if ($LASTEXITCODE -ne 0) { throw "pip could not install $Repo (quit a running Gatewatch and retry)" }
& $Gatewatch --version | Out-Null
if ($LASTEXITCODE -ne 0) { throw "$Gatewatch does not run after install" }

# A .cmd shim rather than a link: links need developer mode or admin rights on Windows.
New-Item -ItemType Directory -Force -Path $BinDir | Out-Null
Set-Content -Encoding ASCII -Path (Join-Path $BinDir "gatewatch.cmd") -Value "@`"$Gatewatch`" %*"
$UserPath = [Environment]::GetEnvironmentVariable("Path", "User")
if (-not (($UserPath -split ";") -contains $BinDir)) {
    [Environment]::SetEnvironmentVariable("Path", "$UserPath;$BinDir", "User")
    Say "added $BinDir to your PATH (new terminals will see it)"
}

$Resources = (& $VenvPython -I -c "from proxy.paths import resources_dir; print(resources_dir())").Trim()
$Icon = Join-Path $Resources "icons\gatewatch.ico"
# pythonw runs the app without a console window.
function New-Shortcut($Path) {
    $Shell = New-Object -ComObject WScript.Shell
    $Link = $Shell.CreateShortcut($Path)
    $Link.TargetPath = $GatewatchW
    $Link.Arguments = "-m proxy"
    $Link.WorkingDirectory = $Data
    $Link.Description = "Gatewatch: watch and approve what your AI tools do"
    if (Test-Path $Icon) { $Link.IconLocation = $Icon }
    $Link.Save()
}
New-Shortcut (Join-Path $Programs "Gatewatch.lnk")
New-Shortcut (Join-Path $Startup "Gatewatch.lnk")
Say "Start-menu shortcut and start at login installed"

if ($NoLaunch) {
    Say "installed; start the tray app from the Start menu or with: gatewatch"
    exit 0
}
Start-Process -FilePath $GatewatchW -ArgumentList "-m", "proxy" -WorkingDirectory $Data
Say "installed and started; look for the Gatewatch icon in the notification area"
