#!/usr/bin/env perl
# Turns a CUDA source into host C++ for samples/host (see host_prelude.h): every kernel launch
# `NAME<<<CONFIG>>>(ARGS)` becomes `tbdhost::launch(tbdhost::LaunchConfig{CONFIG}, NAME, ARGS)`.
# usage: to_host.pl IN.cu OUT.cpp
use strict;
use warnings;
my ($in, $out) = @ARGV;
open(my $src, '<', $in) or die "to_host.pl: cannot read $in: $!\n";
local $/;
my $text = <$src>;
close($src);
my $count = ($text =~ s/([A-Za-z_][\w:]*(?:<[\w:]+>)?)\s*<<<(.*?)>>>\(/tbdhost::launch(tbdhost::LaunchConfig{$2}, $1, /gs);
open(my $dst, '>', $out) or die "to_host.pl: cannot write $out: $!\n";
print $dst "// Generated from $in by samples/host/to_host.pl (" . ($count || 0) . " launches); do not edit.\n#line 1 \"$in\"\n$text";
close($dst);
