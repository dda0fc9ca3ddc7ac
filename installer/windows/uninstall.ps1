# Remove Gatewatch for this user on Windows: first offer to unwrap every client config that
# launches servers through it, then remove the venv, the shim, the Start-menu and Startup
# shortcuts. The audit log, trust and policy stay unless -Purge.
#   powershell -ExecutionPolicy Bypass -File installer\windows\uninstall.ps1 [-Yes] [-Purge]
param([switch]$Yes, [switch]$Purge)
$ErrorActionPreference = "Stop"

$Repo = (Resolve-Path (Join-Path $PSScriptRoot "..\..")).Path
$Data = Join-Path $env:LOCALAPPDATA "gatewatch"
$Venv = Join-Path $Data "venv"
$VenvPython = Join-Path $Venv "Scripts\python.exe"
$BinDir = Join-Path $env:USERPROFILE ".local\bin"
$Programs = [Environment]::GetFolderPath("Programs")
$Startup = [Environment]::GetFolderPath("Startup")
$Unwrap = Join-Path $Repo "installer\unwrap_clients.py"

function Say($Text) { Write-Host "gatewatch: $Text" }

if (Test-Path $VenvPython) {
    $Wrapped = & $VenvPython -I $Unwrap --list
    if ($LASTEXITCODE -ne 0) {
        Say "warning: could not list wrapped client configs; check them by hand after uninstalling"
    } elseif ($Wrapped) {
        Say "these client servers are launched through Gatewatch:"
        $Wrapped | ForEach-Object { Write-Host "  $_" }
        $Answer = "y"
        if (-not $Yes) {
            if (-not [Environment]::UserInteractive) { throw "no one to ask: run again with -Yes" }
            $Answer = Read-Host "gatewatch: restore their original commands now? [Y/n]"
            if (-not $Answer) { $Answer = "y" }
        }
        if ($Answer -match "^(y|yes)$") {
            & $VenvPython -I $Unwrap --apply
            if ($LASTEXITCODE -ne 0) { throw "unwrapping failed; nothing was removed" }
        } else {
            Say "warning: left wrapped; those servers will fail to start until you unwrap them"
        }
    }
}

Remove-Item -Force -ErrorAction SilentlyContinue (Join-Path $Programs "Gatewatch.lnk")
Remove-Item -Force -ErrorAction SilentlyContinue (Join-Path $Startup "Gatewatch.lnk")
Remove-Item -Force -ErrorAction SilentlyContinue (Join-Path $BinDir "gatewatch.cmd")
if (Test-Path $Venv) { Remove-Item -Recurse -Force $Venv }

if ($Purge) {
    # platformdirs keeps config and data in the same folder on Windows.
    if (Test-Path $Data) { Remove-Item -Recurse -Force $Data }
    Say "removed Gatewatch and all its data"
} else {
    Say "removed Gatewatch; your data stays in $Data (-Purge deletes it)"
}
Say "if the tray app is still running, quit it from its menu"
