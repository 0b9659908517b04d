#!/bin/bash
llamafactory-cli webchat llamafactory_webchat.yaml
llamafactory-cli webchat llamafactory_webchat.clean.yaml
