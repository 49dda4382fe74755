#!/bin/sh
echo util
